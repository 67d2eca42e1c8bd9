-- remove_detach: detach (and detach_copy) returns its input unchanged in inference; drop it.
-- The one-to-none Transformer example (RemoveDetachPass) of the torch.fx guide "Writing Graph
-- Transformations on ATen IR", in Lua.
local detach = {
  ["torch.ops.aten.detach.default"] = true,
  ["torch.ops.aten.detach_copy.default"] = true,
  ["torch.Tensor.detach"] = true,
}

return graft.transformer {
  name = "remove_detach",
  call_function = function(g, target, args, kwargs)
    if detach[target] and #args == 1 then return args[1] end
    return g:call_function(target, args, kwargs)
  end,
  call_method = function(g, target, args, kwargs)
    if target == "detach" and #args == 1 then return args[1] end
    return g:call_method(target, args, kwargs)
  end,
}
