-- region_epoch.lua: the highest coordinator epoch this region accepted shares from (0 before any).
-- KEYS[1] the region's coordinator epoch key
return {tonumber(redis.call('GET', KEYS[1]) or '0')}
