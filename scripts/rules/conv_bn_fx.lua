-- conv_bn_fx: fold an eval-mode batch norm module into the convolution module before it, in FX
-- graphs (graft_fx export --mode symbolic, where modules are leaves), as torch.fx's own
-- torch.fx.experimental.optimization.fuse does, but in the graph: the folded weight and bias are
-- computed by graph ops on the modules' parameters and buffers, and the convolution runs as
-- torch.conv*d with the settings the graph file records for the module:
--
--   bn(conv(x))  ->  torch.conv2d(x, conv.weight * (bn.weight * s).reshape(-1, 1, 1, 1),
--                                 (conv.bias - bn.running_mean) * s * bn.weight + bn.bias,
--                                 conv.stride, conv.padding, conv.dilation, conv.groups)
--                    where s = torch.rsqrt(bn.running_var + bn.eps)
--
-- nn.Conv1d/2d/3d (zero padding) followed by nn.BatchNorm1d/2d/3d in eval mode with running
-- statistics, as the file records them (a module in training mode, or one without running
-- statistics, normalises with the batch's own). ResNet-18's 20 and MobileNetV3-Small's 34 batch
-- norms. The result equals torch.fx's fuse bit for bit (the ops are fuse_conv_bn_weights's).
--
--   graft run scripts/rules/conv_bn_fx.lua examples/graphs/resnet18.fx.json -o out.json
local torch = graft.ns("torch")
local folded = require("lib.conv_bn").folded

local CONVOLUTIONS = { "torch.nn.Conv2d", "torch.nn.Conv1d", "torch.nn.Conv3d" }
local BATCH_NORMS = { "torch.nn.BatchNorm2d", "torch.nn.BatchNorm1d", "torch.nn.BatchNorm3d" }

--- module path -> {parameter or buffer name -> its shape}
local function tensors_of(node)
  local info = node.graph:module(node.target)
  local found = {}
  for _, list in ipairs { info and info.parameters or {}, info and info.buffers or {} } do
    for _, t in ipairs(list) do found[t.name] = t.shape end
  end
  return found
end

--- A setting as Python has it: the file records tuples as {tuple = {...}}.
local function setting(v)
  if type(v) == "table" and v.tuple then return v.tuple end
  return v
end

--- What the fold needs from the match, or nil when the modules are not ones it can fold.
local function fold_of(m)
  local conv, bn = m.nodes.conv.module, m.nodes.bn.module
  local cs, bs = conv and conv.settings, bn and bn.settings
  if not (cs and bs) then return nil end
  if cs.padding_mode ~= "zeros" or cs.transposed or bs.training ~= false then return nil end
  if bs.track_running_stats ~= true or type(bs.eps) ~= "number" then return nil end
  local ct, bt = tensors_of(m.nodes.conv), tensors_of(m.nodes.bn)
  if not (ct.weight and bt.running_mean and bt.running_var) then return nil end
  local rank = #ct.weight
  return {
    op = "conv" .. (rank - 2) .. "d", rank = rank, settings = cs, eps = bs.eps,
    bias = ct.bias ~= nil, affine = bt.weight ~= nil and bt.bias ~= nil,
  }
end

local pattern = graft.trace(function(x)
  local conv = graft.module(CONVOLUTIONS, "conv")
  local bn = graft.module(BATCH_NORMS, "bn")
  return bn(conv(x))
end)

return graft.rules {
  graft.rule {
    name = "conv_batch_norm_modules",
    examples = { "../../examples/graphs/resnet18.fx.json", "../../examples/graphs/mobilenet_v3_small.fx.json" },
    pattern = pattern,
    filter = function(m) return fold_of(m) ~= nil end,
    replacement = function(m)
      local f = fold_of(m)
      local s = f.settings
      return graft.trace(function(x)
        local at = graft.get_attr
        local w, b = at("conv.weight"), f.bias and at("conv.bias") or graft.None
        local gamma, beta = f.affine and at("bn.weight") or graft.None, f.affine and at("bn.bias") or graft.None
        local w2, b2 = folded(w, b, gamma, beta, at("bn.running_mean"), at("bn.running_var"), f.eps, f.rank,
          not f.bias, not f.affine, not f.affine)
        return torch[f.op](x, w2, b2, setting(s.stride), setting(s.padding), setting(s.dilation), s.groups)
      end)
    end,
  },
}
