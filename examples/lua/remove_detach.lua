-- Reproduces the "One-to-None Pass" of the torch.fx guide "Writing Graph Transformations on
-- ATen IR" (to remove an op, return the value passed in):
--
--     class RemoveDetachPass(torch.fx.Transformer):
--         def call_function(self, target, args, kwargs):
--             if target not in (
--                 torch.ops.aten.detach.default,
--                 torch.ops.aten.detach_copy.default,
--             ):
--                 return super().call_function(target, args, kwargs, meta)
--
--             assert len(args) == 1
--             return args[0]
--
-- (The guide passes an undefined `meta` to super().call_function; torch.fx's signature is
-- (target, args, kwargs), which is what this script uses.)
--
-- Run:  graft run examples/lua/remove_detach.lua examples/graphs/resnet18.aten.json -o out.json

local DETACH = {
  ["torch.ops.aten.detach.default"] = true,
  ["torch.ops.aten.detach_copy.default"] = true,
}

return graft.transformer{
  name = "RemoveDetachPass",
  call_function = function(g, target, args, kwargs)
    if not DETACH[target] then
      return g:call_function(target, args, kwargs)
    end

    assert(#args == 1)
    return args[1]
  end,
}
