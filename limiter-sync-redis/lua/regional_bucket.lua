-- regional_bucket.lua: one exact check-and-take (batch size 1) of one region's part of a token-bucket
-- global quota, or the give-back of one. The quota refills G permits per window and holds a burst of
-- B; a region coordinator splits the refill rate between the regions by demand (the share record,
-- 's:*', as for window quotas: permits per window), and each region's bucket holds a fixed part of
-- the burst. Where the regions' shares sum to at most G at every moment (the coordinator's two-phase
-- writes) and their bursts to at most B, the regions together admit at most B + G * T / window over
-- any time T.
--
-- KEYS[1]  the counter key: the bucket ('b', 'q': see regionalBucketAt in prelude.lua), the
--          region's admitted ('<window>') and denied ('d<window>') permits per window, its share record
-- KEYS[2]  the quota's demand index (a sorted set of the keys by the last window they were written
--          in, which the coordinator reads; flush.lua's for window quotas)
-- ARGV[1]  the caller's time, microseconds since the epoch
-- ARGV[2]  cost: permits to take (1..burst), or minus the permits to give back (an admission that
--          another limit of the same request denied)
-- ARGV[3]  burst: this region's part of the quota's burst, permits
-- ARGV[4]  the quota's window, us (shares and demand counts are per window)
-- ARGV[5]  the static share: the rate without a coordinator's share (G / regions), permits per window
-- ARGV[6]  TTL of the window counts, ms (this window and the next, where the coordinator reads them)
-- ARGV[7]  TTL of the demand index, ms
-- ARGV[8]  a give-back: the window whose admitted count it lowers (else ignored)
-- ARGV[9..12]  the share record the caller last read for the key (its window, share, later share and
--          lease end; -1 for none): where the key holds neither a bucket nor a record while that lease
--          covers the window, the region's Redis lost the key (a key lives through its lease, see
--          region_share.lua); the record is written back, so that the bucket refills at the share the
--          coordinator counts the region at (not the static share) until it writes again, and the
--          bucket starts empty, not with a fresh burst
--
-- Returns {allowed 0/1, remaining permits, retryAfterMicros (0 when allowed), resetMicros (until
-- full), the window index counted in, then the key's share record: window, share, later share, lease
-- end (-1 each where it holds none)}. Every attempt counts: an admission in '<window>', a denial in
-- 'd<window>' (the coordinator's demand is both); the key's first count of a window drops the
-- windows before the previous one and lists the key in the index. The key lives at least until its
-- bucket is full again at the slower of its rate and the static share (region_share.lua extends it
-- when it cuts the share).
-- fail, int, floordiv, ceildiv, digits, knownRecord, regionalBucketAt, restoreLost, regionalRate, drainMs,
-- firstWrite and MAX_EXACT come from prelude.lua.

if #KEYS ~= 2 then
  return fail('expected 2 keys (the counter key and the demand index), got ' .. #KEYS)
end
if #ARGV ~= 12 then
  return fail('expected 12 arguments (now, cost, burst, window, static, ttl, indexTtl, giveBackWindow, and the'
      .. ' record known: window, share, later, leaseEnd), got ' .. #ARGV)
end
local now, window, burst, cost, static, ttl, indexTtl, err
now, err = int(1, 'now', 0, MAX_EXACT / 2)
if not now then return fail(err) end
window, err = int(4, 'window', 1, MAX_EXACT / 2)
if not window then return fail(err) end
burst, err = int(3, 'burst', 1, floordiv(MAX_EXACT / 2, window))
if not burst then return fail(err) end
cost, err = int(2, 'cost', -burst, burst)
if not cost then return fail(err) end
if cost == 0 then return fail('cost must not be 0') end
static, err = int(5, 'static', 1, floordiv(MAX_EXACT / 2, window))
if not static then return fail(err) end
ttl, err = int(6, 'ttl', 1, MAX_EXACT / 2)
if not ttl then return fail(err) end
indexTtl, err = int(7, 'indexTtl', 1, MAX_EXACT / 2)
if not indexTtl then return fail(err) end
local known
known, err = knownRecord(9)
if not known then return fail(err) end

local key = KEYS[1]
local at, q, record, found = regionalBucketAt(key, now, window, static)
local x = floordiv(at, window)
local full = burst * window
-- lost while a lease covered it: the caller's record back, the bucket empty
q, record = restoreLost(key, at, x, q, record, found, known, window, full)
local rate = regionalRate(record, x, static)
local function answer(allowed, remaining, retry)
  local out = {allowed, remaining, retry, ceildiv(q, math.max(1, rate)), x}
  for i = 1, 4 do
    out[#out + 1] = tonumber(record[i]) or -1
  end
  return out
end

if cost < 0 then
  local back, err2 = int(8, 'giveBackWindow', 0, MAX_EXACT / 2)
  if not back then return fail(err2) end
  q = math.max(0, q + cost * window)
  if found or record[1] then
    -- (a key without a bucket holds a full one: nothing to write, and no key made without a TTL)
    redis.call('HSET', key, 'b', digits(at), 'q', digits(q))
  end
  local counted = tonumber(redis.call('HGET', key, digits(back)) or '0')
  if counted > 0 then
    redis.call('HINCRBY', key, digits(back), math.max(cost, -counted))
  end
  return answer(1, floordiv(full - q, window), 0)
end

local after = q + cost * window
local allowed = after <= full
if allowed then
  q = after
  redis.call('HSET', key, 'b', digits(at), 'q', digits(q))
end
local c = redis.call('HINCRBY', key, allowed and digits(x) or ('d' .. digits(x)), cost)
if c == cost then
  -- the key's first count of this kind in the window: older windows dropped, the counts' TTL, the index
  firstWrite(key, ttl, x - 1)
  redis.call('ZADD', KEYS[2], x, key)
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. digits(x - 1))
  redis.call('PEXPIRE', KEYS[2], indexTtl)
end
if allowed then
  -- the bucket's state outlives its backlog, drained at the slower of its rate and the static share
  local rest = drainMs(q, math.min(rate, static))
  if redis.call('PTTL', key) < rest then
    redis.call('PEXPIRE', key, rest)
  end
  return answer(1, floordiv(full - q, window), 0)
end
local retry = rate > 0 and ceildiv(after - full, rate) or window
return answer(0, math.max(0, floordiv(full - q, window)), math.max(1, retry))
