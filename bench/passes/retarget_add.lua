-- Direct edit: every aten.add.Tensor becomes aten.mul.Tensor (seeds/001's first example).
return graft.pass{name = "retarget_add", run = function(g)
  for n in g:nodes{op = "call_function", target = "torch.ops.aten.add.Tensor"} do
    n.target = "torch.ops.aten.mul.Tensor"
  end
end}
