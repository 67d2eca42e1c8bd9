-- Reproduces the "One-to-X Pass" of the torch.fx guide "Writing Graph Transformations on
-- ATen IR" (one op becomes two: the handler makes two calls and returns the last one):
--
--     class ReplaceAddWithMulSub(torch.fx.Transformer):
--         """
--         Original:
--             def f(x, y):
--                 return x + y
--
--         After pass:
--             def f(x, y):
--                 z = x * y
--                 return z - y
--         """
--         def call_function(self, target, args, kwargs):
--             if target != torch.ops.aten.add.Tensor:
--                 return super().call_function(target, args, kwargs)
--
--             x, y = args
--
--             mul_res = super().call_function(torch.ops.aten.mul.Tensor, args, {})
--             return super().call_function(torch.ops.aten.sub.Tensor, (mul_res, y), {})
--
-- As in the guide, the add's kwargs (alpha) are dropped.
--
-- Run:  graft run examples/lua/transformer_add_to_mul_sub.lua examples/graphs/vit_b_16.aten.json -o out.json

local ADD = "torch.ops.aten.add.Tensor"
local MUL = "torch.ops.aten.mul.Tensor"
local SUB = "torch.ops.aten.sub.Tensor"

return graft.transformer{
  name = "ReplaceAddWithMulSub",
  call_function = function(g, target, args, kwargs)
    if target ~= ADD then
      return g:call_function(target, args, kwargs)
    end

    assert(#args == 2, "add.Tensor with " .. #args .. " positional arguments")  -- x, y = args
    local y = args[2]

    local mul_res = g:call_function(MUL, args, {})
    return g:call_function(SUB, { mul_res, y }, {})
  end,
}
