-- region_keys.lua: the keys of one regional quota that a region's nodes flushed lately.
--
-- KEYS[1]      the quota's demand index (see flush.lua)
-- ARGV[1]      the oldest window index wanted
-- ARGV[2]      at most this many keys, the most recently seen first
--
-- Returns the counter keys.

local since, err = int(1, 'window', 0, MAX_EXACT)
if since == nil then
  return fail(err)
end
local limit
limit, err = int(2, 'maxKeys', 1, 1000000)
if limit == nil then
  return fail(err)
end
return redis.call('ZREVRANGEBYSCORE', KEYS[1], '+inf', string.format('%d', since), 'LIMIT', 0, limit)
