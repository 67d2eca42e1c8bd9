-- conv_bn_aten: fold an inference batch norm into the convolution before it, in ATen graphs
-- (graft_fx export --mode aten), as torch.nn.utils.fusion.fuse_conv_bn_weights does, but in
-- the graph: the folded weight and bias are computed by graph ops on the parameters and the
-- convolution runs once, with the literals (stride, padding, dilation, groups) the match bound:
--
--   getitem(native_batch_norm(convolution(x, W, b, ...), gamma, beta, mean, var, False, _, eps), 0)
--     -> convolution(x, W * (gamma * s).view(-1, 1, ...), (b - mean) * s * gamma + beta, ...)
--        where s = rsqrt(var + eps), and b - mean is -mean when the convolution has no bias
--
-- It fires only on batch norms in eval mode: native_batch_norm with training=False (a `where`
-- predicate; in training mode batch norm normalises with the batch's statistics, which no fold
-- can know), or _native_batch_norm_legit_no_training (torch.export's core ATen, AOT autograd); and only on
-- convolutions that are not transposed. Graphs traced with autograd keep the batch norm's
-- other two outputs (save_mean, save_invstd) as dead getitems: the *_stats rules match them
-- (they must have no users) and drop them; after dead code elimination the plain rules match.
-- The fold ops read only parameters and buffers, so a constant-folding pass can precompute them.
-- ResNet-18: 20 folds; MobileNetV3-Small: 34 (every batch norm; the SE blocks' convolutions
-- have none and stay as they are). torch.export's default graph keeps the composite ops
-- (conv2d(...), batch_norm(...)): the conv*_batch_norm rules fold those, the same 20 and 34.
--
-- Not bit-exact: the folded weights round differently from normalising after the
-- convolution. The ops and their order are fuse_conv_bn_weights's, so the result equals
-- PyTorch's own eval-mode fusion (torch.fx.experimental.optimization.fuse) bit for bit, and
-- is close to the unfused model: with random batch-norm statistics the max abs difference is
-- 5.7e-6 on ResNet-18 (outputs up to |13|) and 1.7e-8 on MobileNetV3-Small (outputs up to
-- |0.02|), i.e. about 1e-6 of the output's scale (tests/python/test_rule_library_fusions.py).
--
--   graft match scripts/rules/conv_bn_aten.lua examples/graphs/resnet18.aten.json
--   graft explain scripts/rules/conv_bn_aten.lua examples/graphs/resnet18.aten.json --rule conv_bn_stats
--   graft run scripts/rules/conv_bn_aten.lua examples/graphs/mobilenet_v3_small.aten.json -o out.json
local aten = graft.ops.aten
local getitem = graft.ns("_operator").getitem

--- native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)
local function eval_mode(bn)
  return graft.constrain(bn, {
    name = "training=False",
    where = function(n)
      local training = n:arg(6)
      if training == nil then training = n:kwarg("training") end
      return training == false
    end,
  })
end

local function conv(x, w, b, stride, padding, dilation, output_padding, groups)
  return aten.convolution.default(x, w, b, stride, padding, dilation, false, output_padding, groups)
end

local function unused(v) return graft.constrain(v, { users = 0 }) end

--- The batch norm of each kind, on the convolution `y`.
local batch_norm = {
  native = function(y, gamma, beta, mean, var, eps)
    return eval_mode(aten.native_batch_norm.default(y, gamma, beta, mean, var, graft.any, graft.any, eps))
  end,
  legit = function(y, gamma, beta, mean, var, eps)
    return aten._native_batch_norm_legit_no_training.default(y, gamma, beta, mean, var, graft.any, eps)
  end,
}

--- The pattern: batch norm `kind` after a convolution; with `stats`, also the batch norm's two
--- other outputs, which must be dead. Inputs (the replacement's parameters, in this order):
--- x, w, b, stride, padding, dilation, output_padding, groups, gamma, beta, mean, var, eps.
local function pattern(kind, stats)
  return graft.trace(function(x, w, b, stride, padding, dilation, output_padding, groups,
                              gamma, beta, mean, var, eps)
    local y = conv(x, w, b, stride, padding, dilation, output_padding, groups)
    local bn = batch_norm[kind](y, gamma, beta, mean, var, eps)
    if stats then
      return { getitem(bn, 0), unused(getitem(bn, 1)), unused(getitem(bn, 2)) }
    end
    return getitem(bn, 0)
  end)
end

--- The rank of the convolution's weight: its tensor_meta, else the parameter table.
local function weight_rank(w)
  if getmetatable(w) ~= "graft.Node" then return nil end
  local tm = w.meta.tensor_meta
  if tm and tm.shape then return #tm.shape end
  if w.op == "get_attr" then
    local attr = w.graph:attribute(w.target)
    if attr then return #attr.shape end
  end
end

local function is_none(v) return v == graft.None end

--- The folded weight and bias, traced: fuse_conv_bn_weights's ops in its order. `shape` views
--- the per-channel scale for the weight; the flags say which parameters are None.
local function folded_parameters(w, b, gamma, beta, mean, var, eps, shape, no_bias, no_gamma, no_beta)
  local s = aten.rsqrt.default(aten.add.Tensor(var, eps))
  local scale = no_gamma and s or aten.mul.Tensor(gamma, s)
  local w2 = aten.mul.Tensor(w, aten.view.default(scale, shape))
  local b2 = aten.mul.Tensor(no_bias and aten.neg.default(mean) or aten.sub.Tensor(b, mean), s)
  if not no_gamma then b2 = aten.mul.Tensor(b2, gamma) end
  if not no_beta then b2 = aten.add.Tensor(b2, beta) end
  return w2, b2
end

--- The fold of one match. `m.inputs` as in `pattern`; None for a missing conv bias or affine
--- parameter. The order of the ops is fuse_conv_bn_weights's.
local function fold(m, outputs)
  local inp = m.inputs
  local rank = weight_rank(inp[2])
  local shape = { -1 }
  for _ = 2, rank do shape[#shape + 1] = 1 end
  local no_bias, no_gamma, no_beta = is_none(inp[3]), is_none(inp[9]), is_none(inp[10])

  return graft.trace(function(x, w, b, stride, padding, dilation, output_padding, groups,
                              gamma, beta, mean, var, eps)
    local w2, b2 = folded_parameters(w, b, gamma, beta, mean, var, eps, shape, no_bias, no_gamma, no_beta)
    local y = conv(x, w2, b2, stride, padding, dilation, output_padding, groups)
    if outputs == 1 then return y end
    return { y, y, y } -- the dead statistics go with the batch norm
  end)
end

local function rule(name, kind, stats)
  return graft.rule {
    name = name,
    -- graft verify checks each rule here: make_fx's form (native_batch_norm) and torch.export's
    -- core ATen (_native_batch_norm_legit_no_training, dead statistics already removed)
    examples = { "../../examples/graphs/resnet18.aten.json", "../../examples/graphs/mobilenet_v3_small.aten.json",
      "../../examples/graphs/conv_examples.core_aten.json" },
    pattern = pattern(kind, stats),
    -- the fold needs the weight's rank (for the per-channel view); eps must be a number
    filter = function(m)
      local rank = weight_rank(m.inputs[2])
      return rank ~= nil and rank >= 3 and type(m.inputs[13]) == "number"
    end,
    replacement = function(m) return fold(m, stats and 3 or 1) end,
  }
end

--- torch.export's default graph keeps the composite ops: conv1d/conv2d/conv3d (stride, padding,
--- dilation and groups, trailing defaults left out) and batch_norm (one output). Inputs: x, w, b,
--- stride, padding, dilation, groups, gamma, beta, mean, var, eps.
local function composite_rule(op)
  local convolution = aten[op].default
  return graft.rule {
    name = op .. "_batch_norm",
    examples = { "../../examples/graphs/conv_examples.export.json" },
    pattern = graft.trace(function(x, w, b, stride, padding, dilation, groups, gamma, beta, mean, var, eps)
      local y = convolution(x, w, b, stride, padding, dilation, groups)
      return eval_mode(aten.batch_norm.default(y, gamma, beta, mean, var, graft.any, graft.any, eps, graft.any))
    end),
    filter = function(m)
      return weight_rank(m.inputs[2]) ~= nil and type(m.inputs[12]) == "number"
    end,
    replacement = function(m)
      local inp = m.inputs
      local rank = weight_rank(inp[2])
      local shape = { -1 }
      for _ = 2, rank do shape[#shape + 1] = 1 end
      local no_bias, no_gamma, no_beta = is_none(inp[3]), is_none(inp[8]), is_none(inp[9])
      return graft.trace(function(x, w, b, stride, padding, dilation, groups, gamma, beta, mean, var, eps)
        local w2, b2 = folded_parameters(w, b, gamma, beta, mean, var, eps, shape, no_bias, no_gamma, no_beta)
        return convolution(x, w2, b2, stride, padding, dilation, groups)
      end)
    end,
  }
end

return graft.rules {
  rule("conv_bn_stats", "native", true),
  rule("conv_bn", "native", false),
  rule("conv_bn_legit_stats", "legit", true),
  rule("conv_bn_legit", "legit", false),
  composite_rule("conv1d"),
  composite_rule("conv2d"),
  composite_rule("conv3d"),
}
