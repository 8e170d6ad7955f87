-- lease.lua: reservation mode. Takes up to `want` permits of a window limit's budget for one node,
-- atomically, so that nodes admitting only from what they were granted can never pass the limit.
--
-- KEYS[1]  the counter key (the same key and layout as flush.lua's 'w' counters)
-- ARGV[1]  window index w (windows aligned to the epoch, as the node computed it)
-- ARGV[2]  time elapsed in window w, microseconds
-- ARGV[3]  window length W, microseconds
-- ARGV[4]  unit in microseconds for the sliding estimate, chosen so that 3 * limit * (W / unit)
--          stays below 2^53; 0 for a fixed window (the previous window does not count)
-- ARGV[5]  limit, permits per window
-- ARGV[6]  want, permits asked for (1..limit)
-- ARGV[7]  counter TTL, ms
-- ARGV[8]  need, the fewest permits worth granting (1..want): fewer free grants none
--
-- Returns {granted, count of window w after the grant, count of window w - 1}. The grant is the
-- largest g <= want with
--   fixed:   current + g <= limit
--   sliding: (current + g) * W + previous * (W - elapsed) <= limit * W   (W, elapsed in units)
-- or 0 when that is below need (a request that does not fit leaves what is free to the others). A
-- grant that the node never receives (a timeout) is lost budget, never extra budget.
-- fail, floordiv, digits, dropCountsBefore and keptTtl come from prelude.lua.


if #KEYS ~= 1 or #ARGV ~= 8 then
  return fail('expected 1 key and 8 arguments')
end
local w = tonumber(ARGV[1])
local elapsed = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local unit = tonumber(ARGV[4])
local limit = tonumber(ARGV[5])
local want = tonumber(ARGV[6])
local need = tonumber(ARGV[8])
if not (w and elapsed and window and unit and limit and want and need) or want < 1 or limit < 1 or window < 1
    or elapsed < 0 or elapsed >= window or unit < 0 or need < 1 or need > want then
  return fail('bad arguments: ' .. table.concat(ARGV, ' '))
end

local key = KEYS[1]
local field = string.format('%d', w)
local prevField = string.format('%d', w - 1)
local cur = tonumber(redis.call('HGET', key, field) or '0')
local prev = tonumber(redis.call('HGET', key, prevField) or '0')

local available
if unit == 0 then
  available = limit - cur
else
  local wu = math.floor(window / unit)
  local eu = math.floor(elapsed / unit)
  -- the largest g with (cur + g) * wu + prev * (wu - eu) <= limit * wu (exact: the double quotient
  -- may round up past an integer)
  available = floordiv(limit * wu - prev * (wu - eu) - cur * wu, wu)
end
local granted = 0
if available >= need then
  granted = math.min(want, available)
end
if granted > 0 then
  cur = redis.call('HINCRBY', key, field, granted)
  if cur == granted then
    -- the window's first grant: drop the windows before the previous one and live through the next
    -- window (later grants in the window find this done: one command each, not four)
    local _, marked = dropCountsBefore(key, w - 1)
    redis.call('PEXPIRE', key, digits(keptTtl(key, marked, tonumber(ARGV[7]), w * window + elapsed, window)))
  end
end
return {granted, cur, prev}
