-- Reproduces the second example of the torch.fx guide "Writing Graph Transformations on ATen
-- IR" (section "Passes": inserting a node with the graph's utility functions):
--
--     def insert_relu_after_add(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
--         for node in gm.graph.nodes:
--             if node.op == "call_function" and node.target == torch.ops.aten.add.Tensor:
--                 with gm.graph.inserting_after(node):
--                     new_relu_node = gm.graph.call_function(torch.ops.aten.relu.default, args=(node,))
--                     node.replace_all_uses_with(new_relu_node)
--
-- The new relu is itself a user of `node`. Read literally, torch.fx's replace_all_uses_with
-- rewrites that use too and the relu consumes itself (relu = relu(relu)), which is why the
-- Python version needs `delete_user_cb=lambda user: user is not new_relu_node`. graft's
-- replace_all_uses_with never rewrites the replacement node itself; the filter below says the
-- same thing explicitly, so the script reads the same in both worlds.
--
-- Run:  graft run examples/lua/insert_relu_after_add.lua examples/graphs/vit_b_16.aten.json -o out.json

local ADD = "torch.ops.aten.add.Tensor"
local RELU = "torch.ops.aten.relu.default"

local function insert_relu_after_add(g)
  local inserted = 0
  for node in g:nodes() do  -- the nodes as they were when the loop started
    if node.op == "call_function" and node.target == ADD then
      -- Nodes created while `scope` is open go right after `node`; the insertion point is
      -- restored when `scope` goes out of scope (Python's `with`).
      local scope <close> = g:inserting_after(node)  -- luacheck: no unused
      local new_relu_node = g:call_function(RELU, { node })
      node:replace_all_uses_with(new_relu_node, function(user) return user ~= new_relu_node end)
      inserted = inserted + 1
    end
  end
  print(("inserted %d %s nodes"):format(inserted, RELU))
end

return graft.pass{ name = "insert_relu_after_add", run = insert_relu_after_add }
