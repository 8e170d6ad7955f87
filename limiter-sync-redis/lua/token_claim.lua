-- token_claim.lua: a node claims several tokens of a token bucket or leaky bucket meter at once,
-- tokens of the refill to come included, each usable only from its due time, so that nodes admitting
-- only claimed tokens at or after their due times never pass the bucket together (TokenStore).
--
-- KEYS[1]  the counter key (the same key and state as gcra.lua's: exact and claiming nodes share it)
-- ARGV[1]  the caller's time, microseconds since the epoch
-- ARGV[2]  want: tokens to take at most (0 only with a give-back)
-- ARGV[3]  need: the fewest worth taking (0..want): fewer are not granted at all
-- ARGV[4]  giveBack: tokens an earlier claim took and the node did not use
-- ARGV[5]  horizon: how far from now (us) the last token granted may be due
-- ARGV[6]  capacity
-- ARGV[7]  scale: scaled units per microsecond  (as gcra.lua)
-- ARGV[8]  interval: scaled units per token     (as gcra.lua)
-- ARGV[9]  unused: scaled units the bucket holds beyond the caller's own admissions (tokens its last
--          grant charged that expired or were dropped unused, TokenClaims), given back only where the
--          bucket's state is still the one that grant wrote, ARGV[10] (its base time) and ARGV[11] (its
--          backlog): after any other write (another node's claim, an exact decision) that writer's
--          tokens may rest on them
--
-- Returns {granted, backlogBefore, level, retryAfterMicros}: the tokens granted (0, or need..want), the
-- backlog after the give-back and before the grant (token i is due ceil((backlogBefore + i * interval
-- - burst) / scale) us after now, or now), whole tokens left now after the grant (0 in debt), and when
-- nothing was granted though tokens were wanted, the time (rounded up, at least 1) until max(need, 1)
-- could be (else 0).
--
-- State and time as gcra.lua: {b = base time, t = backlog at b}, drained to the caller's time (a
-- caller behind the base counts at the base). The give-back lowers the backlog, never below 0 (a full
-- bucket). A write that grants (or gives back unused units) also records the backlog it leaves as the
-- claims' mark, below which give_back.lua never goes; a give-back alone lowers the mark to what it
-- leaves where the mark was above that. The grant is the largest g <= want with
-- backlog + g * interval - burst <= horizon * scale, or 0 when that is below need. No grant and no
-- give-back writes nothing, as a gcra.lua denial; a give-back to a key without state neither (it is a
-- full bucket already). Numbers stay integers below 2^53: the caller (ExactArgs.checkClaim) keeps
-- burst + horizon * scale, giveBack * interval and want * interval within 2^52, and each is checked
-- here again.
-- fail, int, floordiv, ceildiv, bucketArgs, bucketAt, claimsFloor, writeBucket, writeClaimedBucket and
-- MAX_EXACT come from prelude.lua.

if #KEYS ~= 1 then
  return fail('expected 1 key, got ' .. #KEYS)
end
if #ARGV ~= 11 then
  return fail('expected 11 arguments (now, want, need, giveBack, horizon, capacity, scale, interval, unused, ifAt,'
      .. ' ifBacklog), got ' .. #ARGV)
end
local bucket, err = bucketArgs(1, 6)
if not bucket then return fail(err) end
local now, capacity, scale, interval = bucket.now, bucket.capacity, bucket.scale, bucket.interval
local want, need, giveBack, horizon
horizon, err = int(5, 'horizon', 0, MAX_EXACT / 2)
if not horizon then return fail(err) end
-- products compared by division: the products themselves may not be exact
if capacity > MAX_EXACT / 2 / interval or (horizon > 0 and scale > (MAX_EXACT / 2 - capacity * interval) / horizon) then
  return fail('capacity * interval + horizon * scale must be at most 2^52')
end
giveBack, err = int(4, 'giveBack', 0, floordiv(MAX_EXACT / 2, interval))
if not giveBack then return fail(err) end
local burst = capacity * interval
local reach = burst + horizon * scale -- the most backlog a grant may leave
want, err = int(2, 'want', 0, floordiv(reach, interval))
if not want then return fail(err) end
need, err = int(3, 'need', 0, want)
if not need then return fail(err) end
local unused, ifAt, ifBacklog
unused, err = int(9, 'unused', 0, MAX_EXACT / 2)
if not unused then return fail(err) end
ifAt, err = int(10, 'ifAt', 0, MAX_EXACT / 2)
if not ifAt then return fail(err) end
ifBacklog, err = int(11, 'ifBacklog', 0, MAX_EXACT / 2)
if not ifBacklog then return fail(err) end

local key = KEYS[1]
local at, backlog, found, storedAt, storedBacklog = bucketAt(key, now, scale)
-- tokens a node claimed and did not use: back to the bucket, never above full
backlog = backlog - giveBack * interval
local unusedBack = unused > 0 and found and storedAt == ifAt and storedBacklog == ifBacklog
if unusedBack then
  backlog = backlog - unused
end
if backlog < 0 then
  backlog = 0
end

local room = reach - backlog -- negative when the bucket is deeper in debt than the horizon reaches
local granted = 0
if room > 0 then
  granted = math.min(want, floordiv(room, interval))
end
if granted < need then
  granted = 0
end
local after = backlog + granted * interval

if granted > 0 or unusedBack then
  -- the highest point claims took the backlog to, where exact give-backs stop (an unused give-back
  -- applies only to the state the caller's own grant wrote: the mark then)
  writeClaimedBucket(key, at, after, scale)
elseif giveBack > 0 and found then
  -- (a give-back of the caller's own claim, which it makes only where no other claim came since: a
  -- mark above what is left would keep exact give-backs from tokens that are no longer claimed)
  if claimsFloor(key, at, scale) > after then
    writeClaimedBucket(key, at, after, scale)
  else
    writeBucket(key, at, after, scale)
  end
end

local level = 0
if after < burst then
  level = floordiv(burst - after, interval)
end
local retry = 0
if granted == 0 and want > 0 then
  retry = math.max(1, ceildiv(math.max(need, 1) * interval - room, scale))
end
-- at: the time the store counted at (the newest it has seen for the key, or the caller's): a caller
-- behind it dates the grant there, or its tokens would look due too early on its own clock
return {granted, backlog, level, retry, at}
