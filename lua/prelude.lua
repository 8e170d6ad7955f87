-- prelude.lua: helpers shared by the scripts. Redis runs each script on its own, so LuaScript (in
-- limiter-sync) sends every script as `local SCRIPT = '<name>'`, this prelude, then the script.
--
-- Lua numbers are doubles: integers are exact below 2^53, and Lua 5.1 prints numbers above 10^14 in
-- exponent form, so every large number written to Redis goes through string.format('%d', x).

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
