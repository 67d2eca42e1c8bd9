-- fuse_attention: every attention block of an ATen graph becomes one call to torch's
-- scaled-dot-product-attention kernels: torch's own decomposed attention (rules/sdpa_aten.lua,
-- ViT) and attention written by hand with a bias and window masks (rules/sdpa_bias_aten.lua,
-- Swin), after the autograd residue that would block them (detach, dead aliases) is gone. The
-- result computes bit-identically what the original does.
--
--   graft run scripts/pipelines/fuse_attention.lua examples/graphs/vit_b_16.aten.json -o out.json
--   graft explain scripts/rules/sdpa_aten.lua examples/graphs/vit_b_16.aten.json   # why not, where not
local remove_detach = require("passes.remove_detach")
local sdpa = require("rules.sdpa_aten")
local sdpa_bias = require("rules.sdpa_bias_aten")

return graft.pipeline {
  name = "fuse_attention",
  passes = { remove_detach, "dead_code_elimination", sdpa:pass { name = "sdpa" },
    sdpa_bias:pass { name = "sdpa_bias" }, "dead_code_elimination" },
  checks = { "lint" },
  run_checks_after_each_pass = true,
}
