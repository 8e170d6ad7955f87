-- gcra.lua: one exact check-and-take (batch size 1) of a token bucket, a leaky bucket meter or a
-- leaky bucket shaper, the generic cell rate algorithm of limiter-node's GcraKernel.
--
-- KEYS[1]  the counter key (the same key and state as flush.lua's 'g' counters)
-- ARGV[1]  mode: 'meter' (token bucket, leaky bucket meter) or 'shaper' (leaky bucket shaper)
-- ARGV[2]  the caller's time, microseconds since the epoch
-- ARGV[3]  cost, permits to take (1..capacity)
-- ARGV[4]  capacity (burst, or queue size of the shaper)
-- ARGV[5]  scale: scaled units per microsecond  (refillTokens / g)
-- ARGV[6]  interval: scaled units per permit    (periodMicros / g), g = gcd(refillTokens, periodMicros)
--
-- Returns {allowed 0/1, remaining permits, retryAfterMicros (rounded up; 0 when allowed),
--          resetMicros (rounded up), delayMicros (shaper only, rounded up; else 0)}.
--
-- State: a hash {b = base time in us, t = backlog in scaled units at b}, rebased to the caller's
-- time on every admission so that the numbers stay small. A request of cost n is admitted when
-- backlog + n * interval <= capacity * interval (a token bucket holding capacity - backlog / interval
-- tokens). A caller whose clock is behind the base counts at the base (the newest time seen), as
-- flush.lua does, so the state never goes back in time. A denial writes nothing.
--
-- Lua numbers are doubles: every value here stays an integer below 2^53 (the caller checks that
-- capacity * interval fits in 2^52 and that the time is below 2^52), and every number written to
-- Redis is formatted with %d (Lua 5.1 prints numbers above 10^14 in exponent form).
-- fail, int, floordiv, ceildiv, bucketArgs, bucketAt, writeBucket and MAX_EXACT come from prelude.lua.

if #KEYS ~= 1 then
  return fail('expected 1 key, got ' .. #KEYS)
end
if #ARGV ~= 6 then
  return fail('expected 6 arguments (mode, now, cost, capacity, scale, interval), got ' .. #ARGV)
end
local mode = ARGV[1]
if mode ~= 'meter' and mode ~= 'shaper' then
  return fail("mode must be 'meter' or 'shaper', got " .. tostring(mode))
end
local bucket, err = bucketArgs(2, 4)
if not bucket then return fail(err) end
local now, capacity, scale, interval = bucket.now, bucket.capacity, bucket.scale, bucket.interval
local cost
cost, err = int(3, 'cost', 1, capacity)
if not cost then return fail(err) end
if capacity * interval > MAX_EXACT / 2 then
  return fail('capacity * interval must be at most 2^52, got ' .. string.format('%d', capacity)
      .. ' * ' .. string.format('%d', interval))
end

local key = KEYS[1]
local burst = capacity * interval
local at, backlog = bucketAt(key, now, scale)

local after = backlog + cost * interval
if after > burst then
  -- a bucket in debt (token claims reaching into the refill to come, flushes of the approximate mode, a
  -- limit lowered under a live key) has no permits left, not fewer than none
  local remaining = math.max(0, floordiv(burst - backlog, interval))
  return {0, remaining, ceildiv(after - burst, scale), ceildiv(backlog, scale), 0}
end

writeBucket(key, at, after, scale)
local drainMicros = ceildiv(after, scale)
local delay = 0
if mode == 'shaper' then
  delay = ceildiv(backlog, scale)
end
return {1, floordiv(burst - after, interval), 0, drainMicros, delay}
