-- region_nodes.lua: the region's node registry as the coordinator reads it: every node with the
-- deadline of its last heartbeat (see heartbeat.lua), expired ones included until a heartbeat
-- removes them. The coordinator tells a node that keeps beating (its deadline moves on from round to
-- round) from one that stopped (cut off from this Redis, or gone): the latter may still be admitting
-- by its failure policy, on a share it can no longer read.
-- KEYS[1] the registry (a sorted set: member = node id, score = deadline in ms)
-- Returns {node id, deadline, node id, deadline, ...}.
local out = {}
local entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
for i = 1, #entries, 2 do
  out[#out + 1] = entries[i]
  out[#out + 1] = math.floor(tonumber(entries[i + 1]))
end
return out
