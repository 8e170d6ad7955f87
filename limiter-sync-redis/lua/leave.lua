-- leave.lua: a node leaves the registry on purpose (its limiter closed). It no longer counts as alive,
-- and it is remembered for a while as having left, so that a region coordinator reading the registry
-- (region-coordinator/lua/region_nodes.lua) tells a node that left from one that stopped beating (cut off from this Redis,
-- or crashed), which may still be admitting by its failure policy.
--
-- KEYS[1]  the registry (sorted set: node id -> deadline in ms, see heartbeat.lua)
-- KEYS[2]  the nodes that left (sorted set: node id -> when, ms)
-- ARGV[1]  node id
-- ARGV[2]  the node's time, ms since the epoch
-- ARGV[3]  how long a departure is remembered, ms
if #KEYS ~= 2 or #ARGV ~= 3 then
  return fail('expected 2 keys and 3 arguments')
end
local now = tonumber(ARGV[2])
local keep = tonumber(ARGV[3])
if now == nil or keep == nil or keep <= 0 then
  return fail('time and memory must be numbers, memory positive')
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], string.format('%d', now), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', string.format('%d', now - keep))
redis.call('PEXPIRE', KEYS[2], string.format('%d', keep))
return 1
