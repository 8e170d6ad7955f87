-- prelude.lua: helpers shared by the scripts. Redis runs each script on its own, so LuaScript (in
-- limiter-sync-redis) sends every script as `local SCRIPT = '<name>'`, this prelude, then the script.
--
-- Lua numbers are doubles: integers are exact below 2^53, and Lua 5.1 prints numbers above 10^14 in
-- exponent form, so every large number written to Redis goes through string.format('%d', x).

-- the furthest flush.lua's 'P' (the window through which a counter key lives, less one) reaches past
-- the window that writes it: claims ahead (Delta.MAX_AHEAD, 16 windows) and its expiry slack, with room
local MAX_MARK_AHEAD = 64
local TTL_MARGIN_MS = 5000 -- past the moment a key is at rest: node clocks a few seconds apart, a stalled caller
local MAX_EXACT = 9007199254740992 -- 2^53

local function fail(message)
  return redis.error_reply('ERR ' .. SCRIPT .. ': ' .. message)
end

-- the integer in ARGV[i], or nil and a message when it is not one in [min, max]
local function int(i, name, min, max)
  local v = tonumber(ARGV[i])
  if v == nil or v ~= math.floor(v) or v < min or v > max then
    return nil, name .. ' must be an integer between ' .. string.format('%d', min) .. ' and '
        .. string.format('%d', max) .. ', got ' .. tostring(ARGV[i])
  end
  return v
end

-- floor(a / b) and ceil(a / b) for integers whose products stay below 2^53, exact even where the
-- double quotient rounds
local function floordiv(a, b)
  local q = math.floor(a / b)
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  return q
end

local function ceildiv(a, b)
  return -floordiv(-a, b)
end

-- a GCRA bucket's state {b = base time, t = backlog at b} read back by a caller at `now`: the time it
-- counts at (the newest time seen, when its clock is a little behind, so the state never goes back in
-- time) and the backlog drained to that time, never below 0 ((at - b) * scale may exceed 2^53 for a
-- key idle a long time; it is then far above t anyway)
local function drained(b, t, now, scale)
  local at = now
  if at < b then
    at = b
  end
  local backlog = t - (at - b) * scale
  if backlog < 0 then
    backlog = 0
  end
  return at, backlog
end

-- x as Redis stores it: an integer's digits (never Lua 5.1's exponent form)
local function digits(x)
  return string.format('%d', x)
end

-- a GCRA bucket's state at `now` (gcra.lua, token_claim.lua, give_back.lua and flush.lua's 'g'
-- counters share the key): the time it counts at and the backlog drained to it (see drained), and
-- whether the key holds a bucket at all (without one: now and 0, a full bucket), then the state as
-- stored (its base time and backlog, before draining; nil without one)
local function bucketAt(key, now, scale)
  local state = redis.call('HMGET', key, 'b', 't')
  local b = tonumber(state[1])
  local t = tonumber(state[2])
  if b == nil or t == nil then
    return now, 0, false
  end
  local at, backlog = drained(b, t, now, scale)
  return at, backlog, true, b, t
end

-- how long (ms) a bucket's key must live for its backlog to drain at `perMicro` units per us (a rate of 0
-- counts as 1), plus the margin for node clocks a few seconds apart: then it is at rest (equal to a fresh
-- key, a full bucket)
local function drainMs(backlog, perMicro)
  return ceildiv(ceildiv(backlog, math.max(1, perMicro)), 1000) + TTL_MARGIN_MS
end

-- writes a bucket's state, and a TTL to when it is at rest
local function writeBucket(key, at, backlog, scale)
  redis.call('HSET', key, 'b', digits(at), 't', digits(backlog))
  redis.call('PEXPIRE', key, digits(drainMs(backlog, scale)))
end

-- writes a bucket's state as a token claim leaves it (token_claim.lua): its backlog is also the highest
-- point claims took it to, the mark {mb = base time, mt = backlog at mb} below which exact give-backs
-- stop; the TTL to when the bucket is at rest, which the mark never outlives (give-backs keep the
-- backlog at or above it)
local function writeClaimedBucket(key, at, backlog, scale)
  redis.call('HSET', key, 'b', digits(at), 't', digits(backlog), 'mb', digits(at), 'mt', digits(backlog))
  redis.call('PEXPIRE', key, digits(drainMs(backlog, scale)))
end

-- how low a give-back may take a bucket's backlog at `at` (give_back.lua): the claims' mark ('mb',
-- 'mt', written by token claims) drained to then, 0 where no claim marked the bucket. Claimed tokens
-- rest on what is under them: given back, their holders' tokens would look covered after the bucket
-- refilled past them, and the room would be granted again.
local function claimsFloor(key, at, scale)
  local mark = redis.call('HMGET', key, 'mb', 'mt')
  local mb, mt = tonumber(mark[1]), tonumber(mark[2])
  if mb == nil or mt == nil then
    return 0
  end
  local _, floor = drained(mb, mt, at, scale)
  return floor
end

-- a bucket's arguments, as gcra.lua and token_claim.lua take them: the time in ARGV[nowAt], and the
-- capacity, scale and interval in ARGV[limitAt], ARGV[limitAt + 1], ARGV[limitAt + 2]; or nil and a
-- message naming the first that is not an integer in its range
local function bucketArgs(nowAt, limitAt)
  local now, capacity, scale, interval, err
  now, err = int(nowAt, 'now', 0, MAX_EXACT / 2)
  if not now then return nil, err end
  capacity, err = int(limitAt, 'capacity', 1, MAX_EXACT / 2)
  if not capacity then return nil, err end
  scale, err = int(limitAt + 1, 'scale', 1, MAX_EXACT / 2)
  if not scale then return nil, err end
  interval, err = int(limitAt + 2, 'interval', 1, MAX_EXACT / 2)
  if not interval then return nil, err end
  return {now = now, capacity = capacity, scale = scale, interval = interval}
end

-- a window's arguments, as fixed_window.lua, sliding_window_counter.lua and sliding_window_log.lua
-- take them: the time in ARGV[1], the limit in ARGV[3] (at most maxLimit) and the window in ARGV[4],
-- as three values; or nil and a message naming the first that is not an integer in its range. (Values,
-- not a table, and the usual case checked in one test: an exact decision is one script call, and Redis
-- runs its script whole at every call.)
local function windowArgs(maxLimit)
  local now, limit, window = tonumber(ARGV[1]), tonumber(ARGV[3]), tonumber(ARGV[4])
  if now and limit and window and now >= 0 and now <= MAX_EXACT / 2 and now % 1 == 0 and limit >= 1
      and limit <= maxLimit and limit % 1 == 0 and window >= 1 and window <= MAX_EXACT / 4 and window % 1 == 0 then
    return now, limit, window
  end
  local err
  now, err = int(1, 'now', 0, MAX_EXACT / 2)
  if not now then return nil, err end
  limit, err = int(3, 'limit', 1, maxLimit)
  if not limit then return nil, err end
  window, err = int(4, 'window', 1, MAX_EXACT / 4)
  if not window then return nil, err end
  return now, limit, window
end

-- an exact admission's or a lease's first write of a window (fixed_window.lua,
-- sliding_window_counter.lua, lease.lua): drops the key's window counts (its fields named by a window
-- index alone) before window `keep`, in one HDEL per 500 (unpack has a stack limit); answers whether
-- the key holds a count of window `probe` (nil: none looked for), and whether it holds batched
-- flushes' TTL mark (flush.lua's 'P': see keptTtl)
local function dropCountsBefore(key, keep, probe)
  local old, found, marked = {}, false, false
  for _, f in ipairs(redis.call('HKEYS', key)) do
    local fw = tonumber(f)
    if fw ~= nil then
      if fw < keep then
        old[#old + 1] = f
      elseif fw == probe then
        found = true
      end
    elseif f == 'P' then
      marked = true
    end
  end
  for from = 1, #old, 500 do
    redis.call('HDEL', key, unpack(old, from, math.min(#old, from + 499)))
  end
  return found, marked
end

-- the TTL (ms) an exact admission's or a lease's first write of a window sets on a key that batched
-- flushes write too: `ms`, or longer where flush.lua made the key live through window P + 1 ('P':
-- claims ahead and counts of windows to come, which its later writes trust to be there), so that
-- the TTL is never shortened; `now` and `window` in microseconds. One command more, only on such keys.
local function keptTtl(key, marked, ms, now, window)
  local through = marked and tonumber(redis.call('HGET', key, 'P') or 'x') or nil
  -- (a 'P' further ahead than flush.lua sets it was written in windows of another length)
  if through == nil or through - math.floor(now / window) > MAX_MARK_AHEAD then
    return ms
  end
  return math.max(ms, ceildiv((through + 2) * window - now, 1000) + TTL_MARGIN_MS)
end

-- The node registry (heartbeat.lua, and flush.lua for a batch that carries its node's beat): `node`
-- alive until now + ttl (ms), those past their deadline dropped, the registry gone once every node
-- has stopped beating. Returns the nodes alive, `node` included.
local function beat(registry, node, now, ttl)
  redis.call('ZADD', registry, digits(now + ttl), node)
  redis.call('ZREMRANGEBYSCORE', registry, '-inf', digits(now))
  redis.call('PEXPIRE', registry, digits(ttl * 2))
  return redis.call('ZCARD', registry)
end

-- Window counts (flush.lua's, and a regional quota's in regional_bucket.lua) live in fields named by the
-- window index; claims in 'c<window>:<node>' and 'C<window>', a sliding window's claimants in
-- 't<window>:<node>', 'T<window>', 'K<window>', takes' tokens in 'x<window>:<node>', demand met in
-- 'u<window>:<node>' and 'U<window>', the allowances spent in 'A<window>' and each node's in
-- 'a<window>:<node>'; a regional quota also keeps the denied demand of a window in 'd<window>' and the
-- coordinator's share record in 's:*' fields. The window of a field, or nil for the key's own ('h', 'P',
-- 's:*'): one pattern match, as a drop reads every field of the key (three string operations per field made a
-- drop of a key with fifty fields cost 70 us of script time, Zipf over 1,000 keys on 4 nodes).
local function windowOf(field)
  return tonumber(string.match(field, '^[dACTKUactxu]?(%-?%d+)'))
end

-- drops the key's fields of windows before `keep`: one HDEL for up to 500 of them (unpack has a
-- stack limit)
local function dropWindowsBefore(key, keep)
  local old = {}
  for _, f in ipairs(redis.call('HKEYS', key)) do
    local fw = windowOf(f)
    if fw ~= nil and fw < keep then
      old[#old + 1] = f
    end
  end
  for from = 1, #old, 500 do
    redis.call('HDEL', key, unpack(old, from, math.min(#old, from + 499)))
  end
end

-- the first write of a region's window: drop windows before `keep` (the previous one) and make the
-- key live through the next window (the TTL covers this window and the one after it, where this
-- count still weighs), never shortening a TTL the coordinator set for a longer share lease
local function firstWrite(key, ttl, keep)
  local pttl = redis.call('PTTL', key)
  -- -1: the write just made created the key (every key of ours has a TTL), so it holds no older
  -- window to drop (a key seen now and then, the common case, costs two commands here, not four)
  if pttl ~= -1 then
    dropWindowsBefore(key, keep)
  end
  if pttl < tonumber(ttl) then
    redis.call('PEXPIRE', key, ttl)
  end
end

-- adds amount to the key's count of window w and returns the new count (regional window counters)
local function addRegionalCount(key, w, amount, ttl)
  local c = redis.call('HINCRBY', key, tostring(w), amount)
  if c == amount then
    firstWrite(key, ttl, w - 1)
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

-- A regional token bucket (regional_bucket.lua; region_share.lua rebases it when the share changes):
-- its backlog 'q' at base time 'b', in units of which a permit is one window's length in us, so that
-- the bucket drains at its region's share (permits per window) in units per us, whatever the share.
-- The rate in force in window x: the share the record gives x, else the static share (no record,
-- or past its lease).
local function regionalRate(record, x, static)
  local share = shareFor(record, x)
  return share >= 0 and share or static
end

-- The share record a regional bucket's caller passes back (regional_bucket.lua, regional_claim.lua):
-- ARGV[from..from + 3], its window, share, later share and lease end (-1 each for none); or nil and a
-- message.
local function knownRecord(from)
  local known = {}
  for i = from, from + 3 do
    local v, err = int(i, 'known record', -1, MAX_EXACT / 2)
    if not v then return nil, err end
    known[i - from + 1] = v
  end
  return known
end

-- A regional bucket's key that holds neither a bucket nor a record while the record its caller last read
-- (`known`) still covers window x was lost: the region's Redis restarted without its data (a key lives
-- through its lease, region_share.lua). The record is written back and the bucket starts empty (a
-- backlog of `full`), so that it refills at the share the coordinator counts the region at, not at the
-- static share, and gets no fresh burst. Returns the backlog and the record to go on with, and whether
-- it wrote them.
local function restoreLost(key, at, x, q, record, found, known, window, full)
  if found or record[1] or known[1] < 0 or x > known[4] then
    return q, record, false
  end
  redis.call('HSET', key, 's:w', digits(known[1]), 's:v', digits(known[2]), 's:n', digits(known[3]),
      's:x', digits(known[4]), 'b', digits(at), 'q', digits(full))
  redis.call('PEXPIRE', key, ceildiv((known[4] + 2) * window - at, 1000) + TTL_MARGIN_MS)
  return full, {known[1], known[2], known[3], known[4]}, true
end

-- A regional token bucket's state at `now`: the time it counts at (the newest seen, as bucketAt), its backlog
-- drained window by window at the rate in force in each, the share record ('s:w', 's:v', 's:n', 's:x', as
-- shareFor reads it), and whether the key holds a bucket. Every change of the record rebases the bucket to
-- the time of the change at the rates before it (region_share.lua), so the record read now held since the
-- base time: the drain is exact. Windows before the record's own (a base time written by a clock behind the
-- coordinator's) drain at the smaller of the record's share and the static share, the safe side; past the
-- lease the static share holds for good, so at most the lease's windows are walked one by one. Then, for a
-- key that holds a bucket, its state as stored (base time and backlog, before draining).
local function regionalBucketAt(key, now, window, static)
  local v = redis.call('HMGET', key, 'b', 'q', 's:w', 's:v', 's:n', 's:x')
  local record = {v[3], v[4], v[5], v[6]}
  local b, q = tonumber(v[1]), tonumber(v[2])
  if b == nil or q == nil then
    return now, 0, record, false
  end
  local stored = q
  local at = now
  if at < b then
    at = b
  end
  local t = b
  local sw, sx = tonumber(record[1]), tonumber(record[4])
  while q > 0 and t < at do
    local x = floordiv(t, window)
    local stop, rate
    if sw == nil or x > sx then
      stop, rate = at, static
    else
      stop = math.min(at, (x + 1) * window)
      rate = x < sw and math.min(math.max(0, tonumber(record[2])), static) or regionalRate(record, x, static)
    end
    q = q - (stop - t) * rate
    t = stop
  end
  if q < 0 then
    q = 0
  end
  return at, q, record, true, b, stored
end
