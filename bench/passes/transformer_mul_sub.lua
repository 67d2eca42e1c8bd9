-- Transformer, one-to-X: add(x, y) -> sub(mul(x, y), y); every other node copied.
return graft.transformer{name = "add_to_mul_sub", call_function = function(g, target, args, kwargs)
  if target ~= "torch.ops.aten.add.Tensor" then return g:call_function(target, args, kwargs) end
  local m = g:call_function("torch.ops.aten.mul.Tensor", args, {})
  return g:call_function("torch.ops.aten.sub.Tensor", {m, args[2]}, {})
end}
