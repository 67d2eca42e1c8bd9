-- Memory spent in Lua itself.
return graft.pass{name = "lua_memory", run = function()
  local t = {}
  while true do t[#t + 1] = string.rep("x", 1000) .. #t end
end}
