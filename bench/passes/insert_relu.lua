-- Insert a relu after every aten.add.Tensor and route the add's users through it.
return graft.pass{name = "insert_relu", run = function(g)
  for n in g:nodes{op = "call_function", target = "torch.ops.aten.add.Tensor"} do
    local _ <close> = g:inserting_after(n)
    local r = g:call_function("torch.ops.aten.relu.default", {n})
    n:replace_all_uses_with(r, function(user) return user ~= r end)
  end
end}
