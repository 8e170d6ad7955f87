-- flush.lua: applies one node's batch of counter deltas atomically and exactly once.
--
-- KEYS[1]      the node's sequence key for this group (same hash slot as every other key)
-- KEYS[2..n+1] one counter key per delta
-- KEYS[n+2]    regional quotas only (ARGV[4] > 0): the limit's demand index, a sorted set of the keys
--              seen per window (their counter keys), which the region coordinator reads (standalone
--              Redis only)
-- ARGV[1]      the batch's sequence number (per node and group, increasing)
-- ARGV[2]      sequence key TTL, seconds
-- ARGV[3]      the node's time, microseconds since the epoch
-- ARGV[4]      the demand index's TTL in ms, or 0 when the batch has no regional deltas
-- then per delta, in KEYS order:
--   'w', window index, counter TTL in ms, amount           -- window counts (sliding window)
--   'f', window index, counter TTL in ms, amount           -- window counts (fixed window)
--   'g', scale, interval, amount                           -- GCRA backlog (token / leaky bucket)
--   'r', window index, counter TTL in ms, amount, denied   -- a region's count of a global quota
--
-- Returns {applied, ...} with, per delta:
--   window: count of that window, count of the window before it (0 for 'f': a fixed window's
--           previous count never weighs, and not reading it saves a command per delta)
--   gcra:   backlog in scaled units at the node's time, 0
--   region: count of that window, count of the window before it, the region's share of the quota
--           for that window and for the next one (-1 where the coordinator's lease does not reach:
--           the node then enforces the static share)
-- applied is 0 when the sequence was seen before (a retry or a replay after reconnect): nothing is
-- applied and the current values are returned, so a retried flush never counts twice.
--
-- All numbers stay integers below 2^53 (Lua numbers are doubles): counts, window indexes, and
-- backlogs bounded by the limit's burst, checked by the caller.

local indexTtl = tonumber(ARGV[4])
local n = #KEYS - 1
if indexTtl ~= nil and indexTtl > 0 then
  n = n - 1
end
if n < 1 or indexTtl == nil then
  return redis.error_reply('ERR flush: expected a sequence key, counter keys and a demand index TTL, got '
      .. #KEYS .. ' keys and ' .. tostring(ARGV[4]))
end
-- the layout is checked before anything is written: a script that fails half way keeps its writes
local width = {w = 4, f = 4, g = 4, r = 5}
local cursor = 5
for _ = 1, n do
  local step = width[ARGV[cursor]]
  if step == nil then
    return redis.error_reply('ERR flush: unknown counter kind ' .. tostring(ARGV[cursor]))
  end
  cursor = cursor + step
end
if cursor ~= #ARGV + 1 then
  return redis.error_reply('ERR flush: ' .. #ARGV .. ' arguments do not match ' .. n .. ' deltas')
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

-- window counts live in fields named by the window index; a regional quota also keeps the denied
-- demand of a window in 'd<window>' and the coordinator's share record in 's:*' fields
local function windowOf(field)
  local w = tonumber(field)
  if w == nil and string.sub(field, 1, 1) == 'd' then
    w = tonumber(string.sub(field, 2))
  end
  return w
end

-- adds amount to the key's count of window w and returns the new count; on the window's first
-- write, drops windows before the previous one and makes the key live through the next window (the
-- TTL covers this window and the one after it, where this count still weighs), never shortening a
-- TTL the coordinator set for a longer share lease
local function count(key, w, amount, ttl)
  local field = tostring(w)
  local c = redis.call('HINCRBY', key, field, amount)
  if c == amount then
    for _, f in ipairs(redis.call('HKEYS', key)) do
      local fw = windowOf(f)
      if fw ~= nil and fw < w - 1 then
        redis.call('HDEL', key, f)
      end
    end
    if redis.call('PTTL', key) < tonumber(ttl) then
      redis.call('PEXPIRE', key, ttl)
    end
  end
  return c
end

-- the share record's value for window w: its current share when the record is for w, its lease
-- share for later windows up to the lease's end, else -1
local function shareFor(record, w)
  local sw, sv, sn, sx = tonumber(record[1]), tonumber(record[2]), tonumber(record[3]), tonumber(record[4])
  if sw == nil then
    return -1
  elseif w == sw then
    return sv
  elseif w > sw and w <= sx then
    return sn
  end
  return -1
end

cursor = 5
for i = 1, n do
  local key = KEYS[i + 1]
  local kind = ARGV[cursor]
  if kind == 'w' or kind == 'f' or kind == 'r' then
    local w = tonumber(ARGV[cursor + 1])
    local ttl = ARGV[cursor + 2]
    local amount = tonumber(ARGV[cursor + 3])
    local c
    if apply then
      c = count(key, w, amount, ttl)
    else
      c = tonumber(redis.call('HGET', key, tostring(w)) or '0')
    end
    out[#out + 1] = c
    if kind == 'f' then
      out[#out + 1] = 0
    else
      out[#out + 1] = tonumber(redis.call('HGET', key, tostring(w - 1)) or '0')
    end
    cursor = cursor + 4
    if kind == 'r' then
      local denied = tonumber(ARGV[cursor])
      cursor = cursor + 1
      if apply then
        if denied > 0 then
          redis.call('HINCRBY', key, 'd' .. string.format('%d', w), denied)
        end
        if c == amount then
          -- first write of the window: the coordinator finds the key through the index
          local index = KEYS[#KEYS]
          redis.call('ZADD', index, w, key)
          redis.call('ZREMRANGEBYSCORE', index, '-inf', '(' .. string.format('%d', w - 1))
          redis.call('PEXPIRE', index, indexTtl)
        end
      end
      local record = redis.call('HMGET', key, 's:w', 's:v', 's:n', 's:x')
      out[#out + 1] = shareFor(record, w)
      out[#out + 1] = shareFor(record, w + 1)
    end
  elseif kind == 'g' then
    local amount = tonumber(ARGV[cursor + 3])
    local scale = tonumber(ARGV[cursor + 1])
    local interval = tonumber(ARGV[cursor + 2])
    cursor = cursor + 4
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
