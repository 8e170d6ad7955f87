-- fixed_window.lua: one exact check-and-take (batch size 1) of a fixed window, limiter-node's
-- FixedWindowKernel: at most `limit` permits per window, windows aligned to the epoch.
--
-- KEYS[1]  the counter key (the same key and layout as flush.lua's 'w' counters)
-- ARGV[1]  the caller's time, microseconds since the epoch
-- ARGV[2]  cost, permits to take (1..limit)
-- ARGV[3]  limit, permits per window
-- ARGV[4]  window length, microseconds
--
-- Returns {allowed 0/1, remaining permits, retryAfterMicros (0 when allowed), resetMicros, 0}, and when
-- allowed a sixth element: the window counted in (for a give-back, give_back.lua).
--
-- State: a hash {<window index> = count}. The window counted in is floor(now / window), or the next
-- one when a caller whose clock is ahead has already opened it (as the kernel counts into a newer
-- window rather than turning the state back); windows further ahead are ignored. Older windows are
-- dropped on a window's first admission. A denial writes nothing.
--
-- Every value is an integer below 2^53 (the caller checks time below 2^52 and window below 2^51);
-- numbers written to Redis are formatted with %d.
-- fail, int, windowArgs, dropCountsBefore, ceildiv, MAX_EXACT and TTL_MARGIN_MS come from prelude.lua.

if #KEYS ~= 1 then
  return fail('expected 1 key, got ' .. #KEYS)
end
if #ARGV ~= 4 then
  return fail('expected 4 arguments (now, cost, limit, window), got ' .. #ARGV)
end
local args, err = windowArgs(MAX_EXACT / 4)
if not args then return fail(err) end
local now, limit, window = args.now, args.limit, args.window
local cost
cost, err = int(2, 'cost', 1, limit)
if not cost then return fail(err) end

local key = KEYS[1]
-- math.fmod is C's fmod, exact on doubles (Lua's % operator is a - floor(a / b) * b, which is not)
local index = (now - math.fmod(now, window)) / window
local field = string.format('%d', index)
local nextField = string.format('%d', index + 1)
local counts = redis.call('HMGET', key, field, nextField)
local w = index
local count = tonumber(counts[1] or '0')
if counts[2] then
  w = index + 1
  field = nextField
  count = tonumber(counts[2])
end
local untilEnd = (w + 1) * window - now

if count + cost > limit then
  return {0, limit - count, untilEnd, untilEnd, 0}
end

if redis.call('HINCRBY', key, field, cost) == cost then
  -- the window's first admission: drop the windows before it and live to its end (later admissions
  -- in the window find this done: two commands each, not four)
  dropCountsBefore(key, w)
  redis.call('PEXPIRE', key, string.format('%d', ceildiv(untilEnd, 1000) + TTL_MARGIN_MS))
end
return {1, limit - count - cost, 0, untilEnd, 0, w}
