-- regional_claim.lua: a node claims several tokens at once of one region's part of a token-bucket global
-- quota (batched mode; regional_bucket.lua is the exact mode's check-and-take on the same key and state).
-- Only tokens the bucket holds now are granted, never tokens of the refill to come: the region's rate is
-- the coordinator's share, which may change at any moment, so a token due later at today's rate could be
-- owed at a slower one. Granted tokens are taken from the bucket at once; the node admits its requests
-- out of them, and lets them expire once the bucket could have refilled past them at the whole quota's
-- rate, the fastest any region's share may run (TokenClaims), so that the regions together still admit
-- at most B + G * T / window over any time T.
--
-- KEYS[1]  the counter key: the bucket ('b', 'q': see regionalBucketAt in prelude.lua), the region's
--          admitted and denied permits per window (counted by the node's flushes, flush.lua's 'r'
--          deltas), its share record
-- ARGV[1]  the caller's time, microseconds since the epoch
-- ARGV[2]  want: tokens to take at most (1..burst)
-- ARGV[3]  need: the fewest worth taking (0..want): fewer are not granted at all
-- ARGV[4]  burst: this region's part of the quota's burst, permits
-- ARGV[5]  the quota's window, us
-- ARGV[6]  the static share: the rate without a coordinator's share (G / regions), permits per window
-- ARGV[7]  unused: units (a permit is one window's length in us) the bucket holds beyond the caller's own
--          admissions (tokens its last grant took that expired unused), given back only where the
--          bucket's state is still the one that grant wrote, ARGV[8] (its base time) and ARGV[9] (its
--          backlog): after any other write (another node's claim, a share change's rebase) that writer's
--          tokens may rest on them
-- ARGV[10..13]  the share record the caller last read for the key (its window, share, later share and
--          lease end; -1 for none): where the key holds neither a bucket nor a record while that lease
--          covers the window, the region's Redis lost the key; as regional_bucket.lua, the record is
--          written back and the bucket starts empty, not with a fresh burst
--
-- Returns {granted, backlogBefore, level, retryAfterMicros, at, then the key's share record: window,
-- share, later share, lease end (-1 each where it holds none)}: the tokens granted (0, or need..want),
-- the backlog after the give-back and before the grant (units), whole tokens left after the grant,
-- when nothing was granted though tokens were wanted the time (rounded up, at least 1) until max(need,
-- 1) could be at the rate in force (else 0), and the time the store counted at (the newest it has seen
-- for the key, or the caller's). No grant and no give-back writes nothing.
-- fail, int, floordiv, ceildiv, digits, knownRecord, regionalBucketAt, restoreLost, regionalRate, drainMs and
-- MAX_EXACT come from prelude.lua.

if #KEYS ~= 1 then
  return fail('expected 1 key (the counter key), got ' .. #KEYS)
end
if #ARGV ~= 13 then
  return fail('expected 13 arguments (now, want, need, burst, window, static, unused, ifAt, ifBacklog, and the'
      .. ' record known: window, share, later, leaseEnd), got ' .. #ARGV)
end
local now, want, need, burst, window, static, unused, ifAt, ifBacklog, err
now, err = int(1, 'now', 0, MAX_EXACT / 2)
if not now then return fail(err) end
window, err = int(5, 'window', 1, MAX_EXACT / 2)
if not window then return fail(err) end
burst, err = int(4, 'burst', 1, floordiv(MAX_EXACT / 2, window))
if not burst then return fail(err) end
want, err = int(2, 'want', 1, burst)
if not want then return fail(err) end
need, err = int(3, 'need', 0, want)
if not need then return fail(err) end
static, err = int(6, 'static', 1, floordiv(MAX_EXACT / 2, window))
if not static then return fail(err) end
unused, err = int(7, 'unused', 0, MAX_EXACT / 2)
if not unused then return fail(err) end
ifAt, err = int(8, 'ifAt', 0, MAX_EXACT / 2)
if not ifAt then return fail(err) end
ifBacklog, err = int(9, 'ifBacklog', 0, MAX_EXACT / 2)
if not ifBacklog then return fail(err) end
local known
known, err = knownRecord(10)
if not known then return fail(err) end

local key = KEYS[1]
local at, q, record, found, storedAt, storedBacklog = regionalBucketAt(key, now, window, static)
local x = floordiv(at, window)
local full = burst * window
-- lost while a lease covered it: the caller's record back, the bucket empty
local wrote
q, record, wrote = restoreLost(key, at, x, q, record, found, known, window, full)
local rate = regionalRate(record, x, static)

-- what the caller's last grant took and the bucket refilled past unused, back where nothing else wrote
-- the bucket since that grant (else another node's tokens may rest on it)
local before = q
if not wrote and unused > 0 and found and storedAt == ifAt and storedBacklog == ifBacklog then
  before = math.max(0, q - unused)
end
local granted = math.min(want, floordiv(full - before, window))
if granted < need or granted < 0 then
  granted = 0
end
local after = before + granted * window
if after ~= q then
  q = after
  redis.call('HSET', key, 'b', digits(at), 'q', digits(q))
  -- the bucket's state outlives its backlog, drained at the slower of its rate and the static share
  local rest = drainMs(q, math.min(rate, static))
  if redis.call('PTTL', key) < rest then
    redis.call('PEXPIRE', key, rest)
  end
end
local level = math.max(0, floordiv(full - q, window))
local retry = 0
if granted == 0 then
  local short = math.max(need, 1) * window - (full - before)
  retry = math.max(1, rate > 0 and ceildiv(short, rate) or window)
end
local out = {granted, before, level, retry, at}
for i = 1, 4 do
  out[#out + 1] = tonumber(record[i]) or -1
end
return out
