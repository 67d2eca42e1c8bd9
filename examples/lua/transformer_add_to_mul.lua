-- Reproduces the "One-to-One Pass" of the torch.fx guide "Writing Graph Transformations on
-- ATen IR" (a Transformer that rebuilds the graph and, every time it sees op A, emits op B
-- instead):
--
--     class ReplaceAddWithMul(torch.fx.Transformer):
--         def call_function(self, target, args, kwargs):
--             if target != torch.ops.aten.add.Tensor:
--                 return super().call_function(target, args, kwargs)
--             return super().call_function(torch.ops.aten.mul.Tensor, args, kwargs)
--
-- In graft the handler gets the NEW graph `g` (args already refer to its nodes) and returns
-- the value that replaces the original node; `g:call_function(target, args, kwargs)` plays
-- the part of `super().call_function(...)`. The node a handler returns keeps the original
-- node's name and tensor_meta.
--
-- Run:  graft run examples/lua/transformer_add_to_mul.lua examples/graphs/vit_b_16.aten.json -o out.json

local ADD = "torch.ops.aten.add.Tensor"
local MUL = "torch.ops.aten.mul.Tensor"

return graft.transformer{
  name = "ReplaceAddWithMul",
  call_function = function(g, target, args, kwargs)
    if target ~= ADD then
      return g:call_function(target, args, kwargs)
    end
    return g:call_function(MUL, args, kwargs)
  end,
}
