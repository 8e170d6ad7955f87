-- head_hides_a_helper.lua: LuaScriptTest's script whose lines above the helpers' mark call one after a
-- string that holds '--'
if #ARGV == 0 then
  return redis.call('GET', '--') .. digits(1)
end
-- @helpers
return fail('unreachable')
