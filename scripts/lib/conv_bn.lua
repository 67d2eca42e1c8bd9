-- conv_bn: the batch-norm fold of the Torch-level rules (rules/conv_bn_torch.lua for dynamo's
-- graphs, rules/conv_bn_fx.lua for symbolic_trace's), traced with torch functions and Python
-- operators; rules/conv_bn_aten.lua spells the same ops in ATen.
local torch = graft.ns("torch")

local M = {}

--- The folded weight and bias, traced: torch.nn.utils.fusion.fuse_conv_bn_weights's ops in its
--- order, so the result equals torch's own eval-mode fusion bit for bit. `rank` is the weight's
--- (the per-channel scale is reshaped to [-1, 1, ...]); the flags say which parameters are None
--- (fuse_conv_bn_weights uses zeros and ones for them, which change nothing).
function M.folded(w, b, gamma, beta, mean, var, eps, rank, no_bias, no_gamma, no_beta)
  local shape = { -1 }
  for _ = 2, rank do shape[#shape + 1] = 1 end
  local s = torch.rsqrt(var + eps)
  local scale = no_gamma and s or gamma * s
  local w2 = w * scale:reshape(shape)
  local b2 = (no_bias and -mean or b - mean) * s
  if not no_gamma then b2 = b2 * gamma end
  if not no_beta then b2 = b2 + beta end
  return w2, b2
end

return M
