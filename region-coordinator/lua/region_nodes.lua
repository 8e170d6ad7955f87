-- region_nodes.lua: the region's node registry as the coordinator reads it: every node with the
-- deadline of its last heartbeat (see heartbeat.lua), expired ones included until a heartbeat
-- removes them, and the nodes that left on purpose lately (see leave.lua). The coordinator tells a
-- node that keeps beating (its deadline moves on from round to round) from one that stopped (cut off
-- from this Redis, or crashed: the latter may still be admitting by its failure policy, on a share it
-- can no longer read) and from one that left.
-- KEYS[1] the registry (a sorted set: member = node id, score = deadline in ms)
-- KEYS[2] the nodes that left (a sorted set: member = node id, score = when, ms)
-- Returns {{node id, deadline, node id, deadline, ...}, {node id that left, ...}}.
local alive = {}
local entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
for i = 1, #entries, 2 do
  alive[#alive + 1] = entries[i]
  alive[#alive + 1] = math.floor(tonumber(entries[i + 1]))
end
return {alive, redis.call('ZRANGE', KEYS[2], 0, -1)}
