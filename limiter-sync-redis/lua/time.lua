-- time.lua: the server's clock, which every node sets its own to agree with (StoreClock): one clock
-- for all the nodes, so that they agree about which window a request falls in.
--
-- KEYS[1]  the node registry: read by nothing here, it routes the call, so that in a cluster every
--          node asks the same server
--
-- Returns the server's time, microseconds since the epoch.

if #KEYS ~= 1 or #ARGV ~= 0 then
  return fail('expected 1 key (the registry, for routing) and no arguments')
end
local t = redis.call('TIME')
return tonumber(t[1]) * 1000000 + tonumber(t[2])
