-- heartbeat.lua: the node registry. Records that a node is alive until a deadline and answers how
-- many nodes are alive now.
--
-- KEYS[1]  the registry (a sorted set: member = node id, score = deadline in ms since the epoch)
-- ARGV[1]  node id
-- ARGV[2]  the node's time, ms since the epoch
-- ARGV[3]  how long the node counts as alive without another heartbeat, ms
--
-- Returns the number of nodes alive at the node's time, itself included.

if #KEYS ~= 1 or #ARGV ~= 3 then
  return fail('expected 1 key and 3 arguments')
end
local now = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
if now == nil or ttl == nil or ttl <= 0 then
  return fail('time and ttl must be numbers, ttl positive')
end
return beat(KEYS[1], ARGV[1], now, ttl)
