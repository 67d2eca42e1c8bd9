-- Patterns holding big literals, traced when the script loads: the load's memory budget sees
-- what the patterns keep.
local aten = graft.ops.aten
local big = string.rep("x", 1 << 20)
local patterns = {}
for i = 1, 400 do
  patterns[i] = graft.trace(function(x) return aten.add.Tensor(x, big .. i) end)
end
return graft.pass{name = "unused", run = function() end}
