-- region_share.lua: a region coordinator writes one region's shares of one quota, fenced by epoch.
--
-- KEYS[1]      the region's coordinator epoch key: the highest epoch it accepted shares from
-- KEYS[2..n+1] counter keys of the quota
-- ARGV[1]      the writer's epoch (a new leader raises it; writes from an older epoch are refused)
-- ARGV[2]      the current window index w
-- ARGV[3]      TTL of the counter keys in ms: at least to the end of the lease
-- ARGV[4]      'window' (a fixed window or sliding window quota) or 'bucket' (a token-bucket quota)
-- ARGV[5]      buckets: the coordinator's time, us since the epoch (else 0)
-- ARGV[6]      buckets: the quota's window, us (else 0)
-- ARGV[7]      buckets: the static share, permits per window (else 0)
-- then 3 arguments per key: share for window w, share for later windows, last window of the lease
--
-- A window quota's share is never written below what the region already counted in that window
-- (nodes admitted it under the share they had): the written values are returned, and the
-- coordinator sums those. A bucket quota's share is a rate (its region's bucket refills that many
-- permits per window, regional_bucket.lua), written as asked: before the record changes, the
-- bucket is drained to the coordinator's time at the rates the old record gave, so that the new
-- rate counts from now on only, and the key lives until the bucket is full again at the slower of
-- the new rates and the static share.
-- Returns {1, epoch, share_1, next_1, share_2, next_2, ...} when accepted, {0, stored epoch} when
-- the writer's epoch is older than one the region has accepted.

local n = #KEYS - 1
local HEAD = 7
local err
if n < 1 or #ARGV ~= HEAD + 3 * n then
  return fail('expected ' .. HEAD .. ' arguments and 3 per key, got ' .. #ARGV .. ' for ' .. n .. ' keys')
end
local bucket = ARGV[4] == 'bucket'
if not bucket and ARGV[4] ~= 'window' then
  return fail("kind must be 'window' or 'bucket', got " .. tostring(ARGV[4]))
end
local now, windowMicros, static
if bucket then
  now, err = int(5, 'now', 0, MAX_EXACT / 2)
  if now == nil then return fail(err) end
  windowMicros, err = int(6, 'window length', 1, MAX_EXACT / 2)
  if windowMicros == nil then return fail(err) end
  static, err = int(7, 'static', 1, MAX_EXACT / 2)
  if static == nil then return fail(err) end
end
local epoch
epoch, err = int(1, 'epoch', 1, MAX_EXACT)
if epoch == nil then
  return fail(err)
end
local w
w, err = int(2, 'window', 0, MAX_EXACT)
if w == nil then
  return fail(err)
end
local ttl
ttl, err = int(3, 'ttl', 1, MAX_EXACT)
if ttl == nil then
  return fail(err)
end
for i = 1, n do
  local base = HEAD + 3 * (i - 1)
  for j = 1, 3 do
    local _, e = int(base + j, j == 3 and 'leaseEnd' or 'share', 0, MAX_EXACT)
    if e ~= nil then
      return fail(e)
    end
  end
end

local stored = tonumber(redis.call('GET', KEYS[1]) or '0')
if epoch < stored then
  return {0, stored}
end
if epoch > stored then
  redis.call('SET', KEYS[1], string.format('%d', epoch))
end

local out = {1, epoch}
local field = string.format('%d', w)
local nextField = string.format('%d', w + 1)
for i = 1, n do
  local key = KEYS[i + 1]
  local base = HEAD + 3 * (i - 1)
  local share = tonumber(ARGV[base + 1])
  local later = tonumber(ARGV[base + 2])
  local leaseEnd = tonumber(ARGV[base + 3])
  local rest = 0
  if bucket then
    local at, q = regionalBucketAt(key, now, windowMicros, static)
    if q > 0 then
      redis.call('HSET', key, 'b', digits(at), 'q', digits(q))
      rest = drainMs(q, math.min(share, later, static))
    end
  else
    local counted = tonumber(redis.call('HGET', key, field) or '0')
    local countedNext = tonumber(redis.call('HGET', key, nextField) or '0')
    if share < counted then
      share = counted
    end
    if later < countedNext then
      later = countedNext
    end
  end
  redis.call('HSET', key, 's:w', field, 's:v', string.format('%d', share), 's:n', string.format('%d', later),
      's:x', string.format('%d', leaseEnd), 's:e', string.format('%d', epoch))
  local keep = math.max(ttl, rest)
  if redis.call('PTTL', key) < keep then
    redis.call('PEXPIRE', key, keep)
  end
  out[#out + 1] = share
  out[#out + 1] = later
end
return out
