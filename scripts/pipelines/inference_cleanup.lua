-- inference_cleanup: make an ATen graph (graft_fx export --mode aten) ready for a backend that
-- wants plain functional inference graphs: no detach, no in-place ops, no dead nodes.
-- The result computes exactly what the original does (tests/python check it in PyTorch).
--
--   graft run scripts/pipelines/inference_cleanup.lua examples/graphs/resnet18.aten.json -o out.json
local remove_detach = require("passes.remove_detach")
local out_of_place = require("passes.out_of_place")

return graft.pipeline {
  name = "inference_cleanup",
  passes = { remove_detach, out_of_place, "dead_code_elimination" },
  checks = { "lint" },
  run_checks_after_each_pass = true,
}
