-- flush.lua: applies one node's batch of counter deltas atomically and exactly once.
--
-- KEYS[1]      the node's sequence key for this group (same hash slot as every other key)
-- KEYS[2..n+1] one counter key per delta
-- ARGV[1]      the batch's sequence number (per node and group, increasing)
-- ARGV[2]      sequence key TTL, seconds
-- ARGV[3]      the node's time, microseconds since the epoch
-- then 4 arguments per delta, in KEYS order:
--   'w', window index, counter TTL in ms, amount   -- window counts (fixed / sliding window)
--   'g', scale, interval, amount                   -- GCRA backlog (token / leaky bucket)
--
-- Returns {applied, v1, v2, ...} with two values per delta:
--   window: count of that window, count of the window before it
--   gcra:   backlog in scaled units at the node's time, 0
-- applied is 0 when the sequence was seen before (a retry or a replay after reconnect): nothing is
-- applied and the current values are returned, so a retried flush never counts twice.
--
-- All numbers stay integers below 2^53 (Lua numbers are doubles): counts, window indexes, and
-- backlogs bounded by the limit's burst, checked by the caller.

local n = #KEYS - 1
if n < 1 or #ARGV ~= 3 + 4 * n then
  return redis.error_reply('ERR flush: expected 4 arguments per key, got ' .. #ARGV .. ' for ' .. n .. ' keys')
end
local seq = tonumber(ARGV[1])
-- one command in the usual case: record this sequence and read the one before it; a replay (the
-- sequence was seen) puts the newer one back
local previousSeq = redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2], 'GET')
local apply = seq > tonumber(previousSeq or '-1')
if not apply then
  redis.call('SET', KEYS[1], previousSeq, 'EX', ARGV[2])
end
local now = tonumber(ARGV[3])
local out = {apply and 1 or 0}

for i = 1, n do
  local key = KEYS[i + 1]
  local base = 3 + 4 * (i - 1)
  local kind = ARGV[base + 1]
  local amount = tonumber(ARGV[base + 4])
  if kind == 'w' then
    local w = tonumber(ARGV[base + 2])
    local field = tostring(w)
    local prev = tostring(w - 1)
    local count
    if apply then
      count = redis.call('HINCRBY', key, field, amount)
      if count == amount then
        -- the window's first write: drop windows before the previous one, and live through the next
        -- window (the TTL covers this window and the one after it, where this count still weighs)
        for _, f in ipairs(redis.call('HKEYS', key)) do
          if f ~= field and f ~= prev and tonumber(f) < w then
            redis.call('HDEL', key, f)
          end
        end
        redis.call('PEXPIRE', key, ARGV[base + 3])
      end
    else
      count = tonumber(redis.call('HGET', key, field) or '0')
    end
    out[#out + 1] = count
    out[#out + 1] = tonumber(redis.call('HGET', key, prev) or '0')
  elseif kind == 'g' then
    local scale = tonumber(ARGV[base + 2])
    local interval = tonumber(ARGV[base + 3])
    local state = redis.call('HMGET', key, 'b', 't')
    local b = tonumber(state[1] or now)
    local t = tonumber(state[2] or '0')
    local at = now
    if at < b then
      at = b -- a node whose clock is a little behind counts at the newest time seen
    end
    local backlog = t - (at - b) * scale
    if backlog < 0 then
      backlog = 0
    end
    if apply then
      backlog = backlog + amount * interval
      -- %d: Lua 5.1 would print numbers above 10^14 in exponent form and lose digits
      redis.call('HSET', key, 'b', string.format('%d', at), 't', string.format('%d', backlog))
      -- the state is at rest (equal to a fresh one) once the backlog has drained
      redis.call('PEXPIRE', key, string.format('%d', math.floor(backlog / scale / 1000) + 1000))
    end
    out[#out + 1] = backlog
    out[#out + 1] = 0
  else
    return redis.error_reply('ERR flush: unknown counter kind ' .. tostring(kind))
  end
end

return out
