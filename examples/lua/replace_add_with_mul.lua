-- Reproduces the first example of the torch.fx guide "Writing Graph Transformations on ATen IR"
-- ("Passes": the most direct way is to loop through the graph and edit the nodes in place):
--
--     def replace_add_with_mul(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
--         for node in gm.graph.nodes:
--             if node.op == "call_function" and node.target == torch.ops.aten.add.Tensor:
--                 node.target = torch.ops.aten.mul.Tensor
--
-- Run:  graft run examples/lua/replace_add_with_mul.lua examples/graphs/vit_b_16.aten.json -o out.json

local ADD = "torch.ops.aten.add.Tensor"
local MUL = "torch.ops.aten.mul.Tensor"

local function replace_add_with_mul(g)
  local replaced = 0
  for node in g:nodes() do
    if node.op == "call_function" and node.target == ADD then
      node.target = MUL
      replaced = replaced + 1
    end
  end
  print(("replaced %d %s nodes by %s"):format(replaced, ADD, MUL))
end

return graft.pass{ name = "replace_add_with_mul", run = replace_add_with_mul }
