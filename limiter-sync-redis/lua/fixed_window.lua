-- fixed_window.lua: one exact check-and-take (batch size 1) of a fixed window, limiter-node's
-- FixedWindowKernel: at most `limit` permits per window, windows aligned to the epoch.
--
-- KEYS[1]  the counter key (the same key and layout as flush.lua's 'w' counters)
-- ARGV[1]  the caller's time, microseconds since the epoch
-- ARGV[2]  cost, permits to take (1..limit)
-- ARGV[3]  limit, permits per window
-- ARGV[4]  window length, microseconds
--
-- Returns, for an admission in the caller's window (floor(now / window)), the window's count after it:
-- one integer, which tells the caller the rest (remaining = limit - count, the reset at that window's
-- end; a reply of several values cost Redis 0.7 us more per call, a sixth of the script's time).
-- Otherwise {allowed 0/1, remaining permits, retryAfterMicros (0 when allowed), resetMicros, 0}, and
-- when allowed (in the next window, which a caller ahead opened) a sixth element: the window counted
-- in (for a give-back, give_back.lua).
--
-- State: a hash {<window index> = count}. The window counted in is floor(now / window), or the next
-- one when a caller whose clock is ahead has already opened it (as the kernel counts into a newer
-- window rather than turning the state back); windows further ahead are ignored. Older windows are
-- dropped on a window's first admission. A denial leaves the state as it found it.
--
-- Cost: one command per admission (HINCRBY), two per denial. The take comes first and is undone when
-- it does not fit, so that an admission needs no read. An admission in a window already open is
-- answered by the lines above '-- @helpers', before the prelude's helpers are made (LuaScript puts them
-- there; Redis runs the whole text at every call, and the eight helpers this script names, each a
-- closure made again per call, were a fifth of its time in Redis); anything else goes on below with
-- the take done (`taken`), where the checks tell a bad argument by name. A window's first admission
-- is the take that finds its count at 0 (HINCRBY answers the cost): only then are the older windows
-- dropped, the TTL set, and the next window looked for. That look is enough to find a window a caller
-- ahead has opened: its first admission dropped this one, so a caller behind that counts here finds 0
-- and looks.
-- (A key that other scripts write too, batched flushes of the limit, flush.lua, or a sliding window
-- counter of the same name, keeps older windows for a while: there a caller behind may count in its
-- own window while the next one is open.)
--
-- Every value is an integer below 2^53 (the caller checks time below 2^52 and window below 2^51);
-- numbers written to Redis are formatted with %d.
-- fail, int, windowArgs, dropCountsBefore, keptTtl, digits, ceildiv, MAX_EXACT and TTL_MARGIN_MS come from prelude.lua.

local taken
do
  -- (the checks below, windowArgs' and the cost's, spelt out: 2^52 the most for now, 2^51 for the
  -- limit and the window)
  local now, cost, limit, window = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
  if #KEYS == 1 and #ARGV == 4 and now and cost and limit and window and now >= 0 and now <= 4503599627370496
      and now % 1 == 0 and limit >= 1 and limit <= 2251799813685248 and limit % 1 == 0 and window >= 1
      and window <= 2251799813685248 and window % 1 == 0 and cost >= 1 and cost <= limit and cost % 1 == 0 then
    taken = redis.call('HINCRBY', KEYS[1], string.format('%d', (now - math.fmod(now, window)) / window), cost)
    if taken ~= cost and taken <= limit then
      return taken
    end
  end
end
-- @helpers

if #KEYS ~= 1 then
  return fail('expected 1 key, got ' .. #KEYS)
end
if #ARGV ~= 4 then
  return fail('expected 4 arguments (now, cost, limit, window), got ' .. #ARGV)
end
local now, limit, window = windowArgs(MAX_EXACT / 4)
if not now then return fail(limit) end -- (windowArgs' message, in its second value)
local err
local cost
cost, err = int(2, 'cost', 1, limit)
if not cost then return fail(err) end

local key = KEYS[1]
-- math.fmod is C's fmod, exact on doubles (Lua's % operator is a - floor(a / b) * b, which is not)
local index = (now - math.fmod(now, window)) / window
local w = index
local field = digits(index)
local count = taken or redis.call('HINCRBY', key, field, cost)
if count == cost then
  -- this window's first admission; or a caller behind in a window gone by, dropped when a caller
  -- ahead opened the next one
  local opened, marked = dropCountsBefore(key, index, index + 1)
  if opened then
    redis.call('HDEL', key, field) -- (it held 0 or nothing)
    w = index + 1
    field = digits(w)
    count = redis.call('HINCRBY', key, field, cost)
  else
    redis.call('PEXPIRE', key, digits(keptTtl(key, marked, ceildiv((index + 1) * window - now, 1000) + TTL_MARGIN_MS,
        now, window)))
  end
end
local untilEnd = (w + 1) * window - now

if count > limit then
  redis.call('HINCRBY', key, field, -cost)
  return {0, limit - count + cost, untilEnd, untilEnd, 0}
end
if w == index then
  return count
end
return {1, limit - count, 0, untilEnd, 0, w}
