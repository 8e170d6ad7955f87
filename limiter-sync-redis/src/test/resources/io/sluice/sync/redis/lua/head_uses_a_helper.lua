-- head_uses_a_helper.lua: LuaScriptTest's script whose lines above the helpers' mark call one
if #ARGV == 0 then
  return digits(1)
end
-- @helpers
return fail('unreachable')
