-- give_back.lua: gives back permits that an exact admission (gcra.lua, fixed_window.lua,
-- sliding_window_counter.lua) took, when another limit of the same request denied it, so that a
-- request denied by one limit spends nothing of the others. Never gives more than was taken: a
-- bucket is never fuller than full, a window's count never below 0.
--
-- KEYS[1]  the counter key
-- ARGV[1]  kind: 'bucket' (token bucket, leaky bucket meter) or 'window' (fixed window, sliding
--          window counter)
-- bucket:  ARGV[2] the caller's time (us), ARGV[3] cost, ARGV[4] scale, ARGV[5] interval (as gcra.lua)
-- window:  ARGV[2] the caller's time (us), ARGV[3] cost, ARGV[4] the window index the admission
--          counted in, ARGV[5] the window's length (us)
--
-- Returns the backlog (scaled units) or the count left. The bucket's backlog is drained to the
-- caller's time (or the newest time seen) as an admission would drain it, then the permits' units
-- taken off, never below the highest point token claims took it to, drained to then (token_claim.lua's
-- mark; an exact node's release under claims made since would take their holders' tokens out of the
-- store's bucket while they still hold them); the key's TTL is set to when it is at rest again, as
-- gcra.lua does. A window's count is lowered in its own field only: a window that has gone (or a count
-- already at 0) is left alone.
-- fail, int, bucketAt, claimsFloor, writeBucket and MAX_EXACT come from prelude.lua.

if #KEYS ~= 1 then
  return fail('expected 1 key, got ' .. #KEYS)
end
if #ARGV ~= 5 then
  return fail('expected 5 arguments (kind, now, cost, and two of the limit), got ' .. #ARGV)
end
local kind = ARGV[1]
local now, cost, err
now, err = int(2, 'now', 0, MAX_EXACT / 2)
if not now then return fail(err) end
cost, err = int(3, 'cost', 1, MAX_EXACT / 4)
if not cost then return fail(err) end
local key = KEYS[1]

if kind == 'bucket' then
  local scale, interval
  scale, err = int(4, 'scale', 1, MAX_EXACT / 2)
  if not scale then return fail(err) end
  interval, err = int(5, 'interval', 1, MAX_EXACT / 2)
  if not interval then return fail(err) end
  local at, backlog, found = bucketAt(key, now, scale)
  if not found then
    return 0
  end
  -- never below a full bucket, nor below where token claims took the backlog (claimsFloor)
  local after = math.max(backlog - cost * interval, math.min(backlog, claimsFloor(key, at, scale)))
  writeBucket(key, at, after, scale)
  return after
elseif kind == 'window' then
  local w, window
  w, err = int(4, 'window index', 0, MAX_EXACT / 2)
  if not w then return fail(err) end
  window, err = int(5, 'window', 1, MAX_EXACT / 4)
  if not window then return fail(err) end
  local field = string.format('%d', w)
  local count = tonumber(redis.call('HGET', key, field) or '0')
  if count <= 0 then
    return 0
  end
  local back = math.min(cost, count)
  return redis.call('HINCRBY', key, field, -back)
end
return fail("kind must be 'bucket' or 'window', got " .. tostring(kind))
