-- sliding_window_log.lua: one exact check-and-take (batch size 1) of a sliding window log,
-- limiter-node's SlidingLogKernel: at most `limit` permits in any window ending now, one timestamp
-- per permit admitted in the last window.
--
-- KEYS[1]  the log key: a sorted set, one member per permit, scored by its time in microseconds
-- ARGV[1]  the caller's time, microseconds since the epoch
-- ARGV[2]  cost, permits to take (1..limit)
-- ARGV[3]  limit, permits per window (at most 100,000: Limit.MAX_LOG_LIMIT)
-- ARGV[4]  window length W, microseconds
--
-- Returns {allowed 0/1, remaining permits, retryAfterMicros (0 when allowed), resetMicros, 0}.
--
-- A permit taken at ts counts while ts > now - W; older members are trimmed on every call. A request
-- is admitted when live + cost <= limit; a denied one is told when the member whose expiry frees
-- enough room leaves the window. New permits are stamped max(now, newest member) so the log stays
-- sorted when a caller's clock is a little behind the last writer (as the kernel does).
--
-- Members are unique: '<ts>:<n>' with n counting up from 0 among the members of one timestamp,
-- zero-padded so that Redis's order of equal scores (by member bytes) is n's order and the last
-- member is the one with the largest n. (A member added twice would be counted once: over-admission.)
-- fail, int, windowArgs, ceildiv and TTL_MARGIN_MS come from prelude.lua.

local MAX_LOG_LIMIT = 100000
local ZADD_CHUNK = 1000 -- members per ZADD: unpack() is bounded by the Lua C stack

if #KEYS ~= 1 then
  return fail('expected 1 key, got ' .. #KEYS)
end
if #ARGV ~= 4 then
  return fail('expected 4 arguments (now, cost, limit, window), got ' .. #ARGV)
end
local now, limit, window = windowArgs(MAX_LOG_LIMIT)
if not now then return fail(limit) end -- (windowArgs' message, in its second value)
local err
local cost
cost, err = int(2, 'cost', 1, limit)
if not cost then return fail(err) end

local key = KEYS[1]
redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', now - window))
local size = redis.call('ZCARD', key)

local newest = nil
local newestN = -1
if size > 0 then
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  newest = tonumber(last[2])
  newestN = tonumber(string.match(last[1], ':(%d+)$')) or -1
end

if size + cost > limit then
  -- the member whose expiry frees enough room for cost more (size > 0 here: cost <= limit)
  local index = size + cost - limit - 1
  local entry = redis.call('ZRANGE', key, index, index, 'WITHSCORES')
  local retry = tonumber(entry[2]) + window - now
  if retry < 0 then
    retry = 0
  end
  return {0, limit - size, retry, newest + window - now, 0}
end

local ts = now
local n = 0
if newest ~= nil and newest >= now then
  ts = newest -- keep the log sorted when this caller's clock is behind the last writer
  n = newestN + 1
end
local stamp = string.format('%d', ts)
local added = 0
while added < cost do
  local chunk = math.min(cost - added, ZADD_CHUNK)
  local args = {}
  for j = 0, chunk - 1 do
    args[#args + 1] = stamp
    args[#args + 1] = stamp .. ':' .. string.format('%09d', n + added + j)
  end
  redis.call('ZADD', key, unpack(args))
  added = added + chunk
end
local reset = ts + window - now
-- the log is at rest (empty, as a fresh key) once its newest member has left the window
redis.call('PEXPIRE', key, string.format('%d', ceildiv(reset, 1000) + TTL_MARGIN_MS))
return {1, limit - size - cost, 0, reset, 0}
