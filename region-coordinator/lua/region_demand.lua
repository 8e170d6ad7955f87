-- region_demand.lua: what a region coordinator reads from one region for one regional quota.
--
-- KEYS         counter keys of the quota (found through its demand index, see flush.lua)
-- ARGV[1]      the current window index w
--
-- Returns, per key, 10 integers (-1 where absent): the region's count of window w, the permits it
-- denied in w (its demand beyond what it admitted), its count of window w + 1 (nodes already past
-- the window edge), then the share record the coordinator last wrote: the window it was written for,
-- the share for that window, the share for later windows, the last window of its lease, its epoch;
-- then the count and the denied permits of window w - 1 (0 where absent), so that a round just after
-- a window's start still sees the demand of the previous window's end.

local w = int(1, 'window', 0, MAX_EXACT)
if w == nil then
  return fail('window must be an integer')
end
local out = {}
for i = 1, #KEYS do
  local v = redis.call('HMGET', KEYS[i], string.format('%d', w), 'd' .. string.format('%d', w),
      string.format('%d', w + 1), 's:w', 's:v', 's:n', 's:x', 's:e', string.format('%d', w - 1),
      'd' .. string.format('%d', w - 1))
  for j = 1, 10 do
    local x = tonumber(v[j])
    if x == nil then
      x = (j <= 3 or j >= 9) and 0 or -1
    end
    out[#out + 1] = x
  end
end
return out
