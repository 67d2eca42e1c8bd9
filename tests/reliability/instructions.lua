-- Plain Lua work.
return graft.pass{name = "instructions", run = function()
  local x = 0
  for i = 1, 1e12 do x = x + i end
end}
