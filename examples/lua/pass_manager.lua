-- Reproduces the "Pass Manager" example of the torch.fx guide "Writing Graph Transformations on
-- ATen IR": two passes in order, a check after each (and, like torch.fx's, once before the first):
--
--     pm = PassManager(
--         passes=[replace_add_with_div, replace_div_with_mul],
--         run_checks_after_each_pass=True,
--         suppress_check_failures=False,
--     )
--
--     def check_div_target(graph_module):
--         for node in graph_module.graph.nodes:
--             if node.op == "call_function" and node.target != torch.div:
--                 raise ValueError("Target should be div!")
--
--     pm.add_checks(check_div_target)
--
--     pm(graph_module)    # raises ValueError after replace_div_with_mul pass
--
-- The guide's check, read literally, rejects every call_function that is not a div (conv,
-- view, ...), so on a real graph it would fail before the first pass. Here it looks at the
-- nodes the two passes produce (div.Tensor and mul.Tensor): it holds on the input and after
-- replace_add_with_div, and fails after replace_div_with_mul, as the guide describes.
--
-- This pipeline stops there: `graft run` prints the report on stderr, then
--   graft: error: examples/lua/pass_manager.lua: check 'examples/lua/pass_manager.lua:54' failed
--   after pass 'replace_div_with_mul': examples/lua/pass_manager.lua:57: Target should be div!
-- (one line; 54 and 57 are the lines of check_div_target and of its error call), exits 1 and
-- writes no output file. pass_manager_suppressed.lua runs the same passes with
-- suppress_check_failures = true.
--
-- Run:  graft run examples/lua/pass_manager.lua examples/graphs/vit_b_16.aten.json -o out.json --report report.json

local ADD = "torch.ops.aten.add.Tensor"
local DIV = "torch.ops.aten.div.Tensor"
local MUL = "torch.ops.aten.mul.Tensor"

local function retarget(g, from, to)
  for node in g:nodes{ op = "call_function", target = from } do
    node.target = to
  end
end

local replace_add_with_div = graft.pass{
  name = "replace_add_with_div",
  run = function(g) retarget(g, ADD, DIV) end,
}

local replace_div_with_mul = graft.pass{
  name = "replace_div_with_mul",
  run = function(g) retarget(g, DIV, MUL) end,
}

-- A check raises an error (or returns false, message) to fail.
local function check_div_target(g)
  for node in g:nodes{ op = "call_function", target = { DIV, MUL } } do
    if node.target ~= DIV then
      error("Target should be div!")
    end
  end
end

return graft.pipeline{
  name = "pass_manager",
  passes = { replace_add_with_div, replace_div_with_mul },
  checks = { check_div_target },
  run_checks_after_each_pass = true,
  suppress_check_failures = false,
}
