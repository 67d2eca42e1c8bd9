-- conv_bn_torch: fold an eval-mode batch norm into the convolution before it, in the
-- Torch-level graphs dynamo hands a torch.compile backend (parameters and buffers are graph
-- inputs), as rules/conv_bn_aten.lua does in ATen graphs:
--
--   F.batch_norm(torch.conv2d(x, W, b, stride, padding, dilation, groups),
--                mean, var, gamma, beta, False, momentum, eps)
--     -> torch.conv2d(x, W * (gamma * s).reshape(-1, 1, 1, 1), (b - mean) * s * gamma + beta, ...)
--        where s = torch.rsqrt(var + eps)
--
-- conv1d, conv2d and conv3d as nn.Conv*d calls them (every argument by position); batch norms
-- whose training argument is False only (in training mode, or without running statistics, batch
-- norm normalises with the batch's own). ResNet-18's 20 and MobileNetV3-Small's 34 batch norms.
-- The fold's ops are fuse_conv_bn_weights's, so the result equals torch's own eval-mode fusion;
-- against the unfused model it differs by rounding (about 1e-6 of the output's scale).
--
--   torch.compile(model, backend=graft.backend("scripts/rules/conv_bn_torch.lua", then="inductor"))
local torch, F = graft.ns("torch"), graft.ns("torch.nn.functional")
local folded = require("lib.conv_bn").folded

--- The rank of a node's tensor_meta, or nil.
local function rank_of(v)
  local tm = getmetatable(v) == "graft.Node" and v.meta.tensor_meta or nil
  return tm and tm.shape and #tm.shape
end

local function is_none(v) return v == graft.None end

-- Inputs: x, w, b, stride, padding, dilation, groups, mean, var, gamma, beta, eps.
local function rule(op)
  local convolution = torch[op]
  return graft.rule {
    name = "torch_" .. op .. "_batch_norm",
    pattern = graft.trace(function(x, w, b, stride, padding, dilation, groups, mean, var, gamma, beta, eps)
      local y = convolution(x, w, b, stride, padding, dilation, groups)
      return F.batch_norm(y, mean, var, gamma, beta, false, graft.any, eps)
    end),
    filter = function(m)
      local i = m.inputs
      return rank_of(i[2]) ~= nil and rank_of(i[8]) == 1 and rank_of(i[9]) == 1 and type(i[12]) == "number"
    end,
    replacement = function(m)
      local i = m.inputs
      local rank, no_bias, no_gamma, no_beta = rank_of(i[2]), is_none(i[3]), is_none(i[10]), is_none(i[11])
      return graft.trace(function(x, w, b, stride, padding, dilation, groups, mean, var, gamma, beta, eps)
        local w2, b2 = folded(w, b, gamma, beta, mean, var, eps, rank, no_bias, no_gamma, no_beta)
        return convolution(x, w2, b2, stride, padding, dilation, groups)
      end)
    end,
  }
end

return graft.rules { rule("conv1d"), rule("conv2d"), rule("conv3d") }
