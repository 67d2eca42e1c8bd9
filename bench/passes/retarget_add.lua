-- Direct edit: every aten.add.Tensor becomes aten.mul.Tensor (the first example of the torch.fx
-- pass-writing guide, replace_add_with_mul).
return graft.pass{name = "retarget_add", run = function(g)
  for n in g:nodes{op = "call_function", target = "torch.ops.aten.add.Tensor"} do
    n.target = "torch.ops.aten.mul.Tensor"
  end
end}
