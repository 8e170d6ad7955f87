-- sliding_window_counter.lua: one exact check-and-take (batch size 1) of a sliding window counter,
-- limiter-node's SlidingCounterKernel. The estimate over the window ending now is
-- previous * (W - elapsed) / W + current, compared in integers:
--   (current + cost) * W + previous * (W - elapsed) <= limit * W
-- with W and elapsed counted in `unit` microseconds, elapsed rounded down (which weighs the previous
-- window slightly more and so never admits more than the exact formula).
--
-- KEYS[1]  the counter key (the same key and layout as flush.lua's 'w' counters)
-- ARGV[1]  the caller's time, microseconds since the epoch
-- ARGV[2]  cost, permits to take (1..limit)
-- ARGV[3]  limit, permits per window
-- ARGV[4]  window length W, microseconds
-- ARGV[5]  unit, microseconds: chosen by the caller so that 3 * limit * (W / unit) <= 2^53
--
-- Returns, for an admission in the caller's window (floor(now / W)), the permits remaining after it: one
-- integer, which tells the caller the rest (the reset at the end of the window after it; as in
-- fixed_window.lua, a reply of several values cost Redis more than the integer). Otherwise {allowed 0/1,
-- remaining permits, retryAfterMicros (0 when allowed), resetMicros, 0}, and when allowed (in the next
-- window, which a caller ahead opened) a sixth element: the window counted in (for a give-back,
-- give_back.lua).
--
-- State: a hash {<window index> = count}, windows aligned to the epoch. The window counted in is
-- floor(now / W), or the next one when a caller whose clock is ahead has already opened it (counted
-- then with elapsed 0, as the kernel does); windows further ahead are ignored. Windows older than the
-- previous one are dropped on a window's first admission. A denial writes nothing.
-- fail, int, windowArgs, dropCountsBefore, keptTtl, digits, floordiv, ceildiv, MAX_EXACT and TTL_MARGIN_MS come from
-- prelude.lua.
--
-- An admission in the caller's window that is not the window's first is answered by the lines above
-- '-- @helpers', before the prelude's helpers are made (as in fixed_window.lua: each a closure made
-- again at every call); anything else goes on below with what they read (`read`).

local read
do
  -- floor(a / b) for integers, exact (the prelude's floordiv, not made yet here: one closure, not ten)
  local function quotient(a, b)
    local q = math.floor(a / b)
    if q * b > a then
      return q - 1
    elseif (q + 1) * b <= a then
      return q + 1
    end
    return q
  end
  -- (the checks below spelt out: windowArgs', the unit's, the cost's and the units')
  local now, cost, limit, window, unit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]),
      tonumber(ARGV[5])
  if #KEYS == 1 and #ARGV == 5 and now and cost and limit and window and unit and now >= 0
      and now <= 4503599627370496 and now % 1 == 0 and limit >= 1 and limit <= 2251799813685248 and limit % 1 == 0
      and window >= 1 and window <= 2251799813685248 and window % 1 == 0 and unit >= 1 and unit <= window
      and unit % 1 == 0 and cost >= 1 and cost <= limit and cost % 1 == 0 then
    local units = quotient(window, unit)
    if 3 * limit * units <= 9007199254740992 then
      local offset = math.fmod(now, window)
      local index = (now - offset) / window
      read = redis.call('HMGET', KEYS[1], string.format('%d', index - 1), string.format('%d', index),
          string.format('%d', index + 1))
      if not read[3] then
        local cur = tonumber(read[2] or '0')
        local spare = limit * units - (cur + cost) * units
            - tonumber(read[1] or '0') * (units - quotient(offset, unit))
        if spare >= 0 and cur > 0 then
          -- (not the window's first admission, which drops older windows and sets the key's TTL below)
          redis.call('HINCRBY', KEYS[1], string.format('%d', index), cost)
          return quotient(spare, units)
        end
      end
    end
  end
end
-- @helpers

if #KEYS ~= 1 then
  return fail('expected 1 key, got ' .. #KEYS)
end
if #ARGV ~= 5 then
  return fail('expected 5 arguments (now, cost, limit, window, unit), got ' .. #ARGV)
end
local now, limit, window = windowArgs(MAX_EXACT / 4)
if not now then return fail(limit) end -- (windowArgs' message, in its second value)
local err
local unit, cost
unit, err = int(5, 'unit', 1, window)
if not unit then return fail(err) end
cost, err = int(2, 'cost', 1, limit)
if not cost then return fail(err) end
local units = floordiv(window, unit) -- W in units
if 3 * limit * units > MAX_EXACT then
  return fail('3 * limit * (window / unit) must be at most 2^53; choose a coarser unit')
end

local key = KEYS[1]
-- math.fmod is C's fmod, exact on doubles (Lua's % operator is a - floor(a / b) * b, which is not)
local offset = math.fmod(now, window)
local index = (now - offset) / window
local counts = read or redis.call('HMGET', key, digits(index - 1), digits(index), digits(index + 1))
local w, cur, prev, elapsed
if counts[3] then
  -- a caller whose clock is ahead has started the next window: count there, at its start
  w = index + 1
  cur = tonumber(counts[3])
  prev = tonumber(counts[2] or '0')
  elapsed = 0
else
  w = index
  cur = tonumber(counts[2] or '0')
  prev = tonumber(counts[1] or '0')
  elapsed = floordiv(offset, unit)
end

local weightedPrev = prev * (units - elapsed)
local used = (cur + cost) * units + weightedPrev
local budget = limit * units

if used > budget then
  -- when cost more would fit, assuming no other admission meanwhile (the kernel's retryAfter)
  local retry
  local free = limit - cur - cost
  if free >= 0 then
    -- in this window, once the previous window's weight has decayed enough
    local elapsedNeeded = units - floordiv(free * units, prev)
    retry = (elapsedNeeded - elapsed) * unit
    if retry < 1 then
      retry = 1
    end
  else
    -- in the next window, where this window's count becomes the weighted one
    local fit = limit - cost
    local elapsedNeeded = 0
    if cur > 0 then
      elapsedNeeded = units - floordiv(fit * units, cur)
    end
    if elapsedNeeded < 0 then
      elapsedNeeded = 0
    end
    retry = (w + 1) * window - now + elapsedNeeded * unit
  end
  local usedNow = cur * units + weightedPrev
  local remaining = 0
  if budget > usedNow then
    remaining = floordiv(budget - usedNow, units)
  end
  local reset = 0
  if cur > 0 then
    reset = (w + 2) * window - now
  elseif prev > 0 then
    reset = (w + 1) * window - now
  end
  return {0, remaining, retry, reset, 0}
end

local reset = (w + 2) * window - now
if redis.call('HINCRBY', key, digits(w), cost) == cost then
  -- the window's first admission: drop the windows before the previous one, and live until this
  -- window's count stops weighing, the next window's end (later admissions in the window find this
  -- done: two commands each, not four)
  local _, marked = dropCountsBefore(key, w - 1)
  redis.call('PEXPIRE', key, digits(keptTtl(key, marked, ceildiv(reset, 1000) + TTL_MARGIN_MS, now, window)))
end
local remaining = floordiv(budget - used, units)
if w == index then
  return remaining
end
return {1, remaining, 0, reset, 0, w}
