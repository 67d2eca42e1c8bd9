-- The torch.fx guide's "Pass Manager" example (as in pass_manager.lua), with
-- suppress_check_failures = True:
--
--     pm = PassManager(
--         passes=[replace_add_with_div, replace_div_with_mul],
--         run_checks_after_each_pass=True,
--         suppress_check_failures=True,
--     )
--     pm.add_checks(check_div_target)
--
-- Same passes and check as pass_manager.lua (loaded with require); the check still fails
-- after replace_div_with_mul, but the pipeline completes, writes the output, and the report
-- lists the failure under that pass ("check_failures" in --report, "check failure
-- (suppressed)" in the printed report).
--
-- Run:  graft run examples/lua/pass_manager_suppressed.lua examples/graphs/vit_b_16.aten.json -o out.json \
--          --report report.json

local pm = require("pass_manager")

return graft.pipeline{
  name = "pass_manager_suppressed",
  passes = pm.passes,
  checks = pm.checks,
  run_checks_after_each_pass = true,
  suppress_check_failures = true,
}
