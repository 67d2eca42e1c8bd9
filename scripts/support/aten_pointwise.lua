-- Elementwise ATen operators, as a pointwise fuser takes them: `graft partition` with this
-- script cuts an ATen graph into the regions such a backend could fuse into one kernel.
--
--   graft partition support/aten_pointwise.lua G.json --explain [-o fused.json]
local pointwise = {
  "add.Tensor", "add_.Tensor", "sub.Tensor", "mul.Tensor", "mul_.Tensor", "div.Tensor", "neg.default",
  "relu.default", "relu_.default", "gelu.default", "sigmoid.default", "tanh.default", "silu.default",
  "hardswish.default", "hardswish_.default", "hardsigmoid.default", "exp.default", "sqrt.default",
  "rsqrt.default", "clamp.default", "where.self",
}
local targets = { name = "aten_pointwise" }
for i, op in ipairs(pointwise) do
  targets[i] = "torch.ops.aten." .. op
end
return {
  support = graft.support.targets(targets),
  non_compute_ops = { "torch.ops.aten.view.default", "torch.ops.aten.t.default" },
}
