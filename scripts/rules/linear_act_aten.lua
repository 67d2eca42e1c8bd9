-- linear_act_aten: fuse a linear layer and the activation after it, in ATen graphs
-- (graft_fx export --mode aten), into one call of graft_fx.kernels.linear_act:
--
--   act(addmm(b, x, t(w)))                  ->  graft_fx.kernels.linear_act(x, w, b, "act")
--   act(view(addmm(b, x, t(w)), shape))     ->  graft_fx.kernels.linear_act(x, w, b, "act", shape)
--
-- act is relu, gelu (approximate 'none' or 'tanh'), hardswish, silu, sigmoid, tanh or
-- hardsigmoid, out of place or in place (relu_, hardswish_, ...: the matmul's result is a
-- temporary nothing else reads, so computing the activation out of place is the same). ATen
-- graphs traced with autograd keep a dead `clone` of an in-place activation's input (saved for
-- backward); the *_clone rules match it too (it must have no users) and drop it.
-- ViT-B/16: the 12 MLP blocks (addmm -> view -> gelu); MobileNetV3-Small: the classifier's
-- Linear -> Hardswish (addmm -> hardswish_, with its dead clone); ResNet-18: none.
--
-- Exact: linear_act runs F.linear, which for a 2-D input with a bias is aten.addmm(b, x, w.t())
-- itself (ATen's at::linear), then the same view and the same activation kernel, so the fused
-- graph imported back into PyTorch gives bit-identical outputs
-- (tests/python/test_rule_library_fusions.py checks ViT-B/16 and MobileNetV3-Small).
--
--   graft match scripts/rules/linear_act_aten.lua examples/graphs/vit_b_16.aten.json
--   graft explain scripts/rules/linear_act_aten.lua examples/graphs/vit_b_16.aten.json --rule linear_view_act
--   graft run scripts/rules/linear_act_aten.lua examples/graphs/vit_b_16.aten.json -o out.json
local aten = graft.ops.aten
local kernels = graft.ns("graft_fx.kernels")

--- activation target -> graft_fx.kernels.ACTIVATIONS name (gelu: see activation_of)
local ACTIVATION = {}
for _, name in ipairs { "relu", "gelu", "hardswish", "silu", "sigmoid", "tanh", "hardsigmoid" } do
  ACTIVATION["torch.ops.aten." .. name .. ".default"] = name
  ACTIVATION["torch.ops.aten." .. name .. "_.default"] = name
end

local act = graft.one_of(
  aten.relu.default, aten.relu_.default, aten.gelu.default, aten.gelu_.default,
  aten.hardswish.default, aten.hardswish_.default, aten.silu.default, aten.silu_.default,
  aten.sigmoid.default, aten.sigmoid_.default, aten.tanh.default, aten.tanh_.default,
  aten.hardsigmoid.default, aten.hardsigmoid_.default)

--- The kernel's name for the activation node, or nil (an unknown gelu approximation).
local function activation_of(node)
  local name = ACTIVATION[node.target]
  if name == "gelu" then
    local approximate = node:kwarg("approximate")
    if approximate == nil or approximate == "none" then return "gelu" end
    if approximate == "tanh" then return "gelu_tanh" end
    return nil
  end
  return name
end

local function linear(x, w, b)
  return aten.addmm.default(b, x, aten.t.default(w))
end

local function activation(h)
  -- gelu may spell approximate= (checked by the filter); the others have no keyword
  return act(h, graft.kw { approximate = graft.optional(graft.any) })
end

--- The autograd residue of an in-place activation: a clone of its input that nothing uses.
local function dead_clone(h)
  return graft.constrain(aten.clone.default(h, graft.kw { memory_format = graft.optional(graft.any) }),
    { users = 0 })
end

local patterns = {
  linear_act = graft.trace(function(x, w, b)
    return activation(linear(x, w, b))
  end),
  linear_view_act = graft.trace(function(x, w, b, shape)
    return activation(aten.view.default(linear(x, w, b), shape))
  end),
  linear_act_clone = graft.trace(function(x, w, b)
    local h = linear(x, w, b)
    return { activation(h), dead_clone(h) }
  end),
  linear_view_act_clone = graft.trace(function(x, w, b, shape)
    local h = aten.view.default(linear(x, w, b), shape)
    return { activation(h), dead_clone(h) }
  end),
}

--- The rule `name`: the fused call, once per output of the pattern (a dead clone's
--- replacement is never read; it just goes away with the clone).
local function rule(name, with_view, outputs)
  return graft.rule {
    name = name,
    examples = {
      "../../examples/graphs/rule_examples.aten.json", "../../examples/graphs/mobilenet_v3_small.aten.json",
      "../../examples/graphs/vit_b_16.aten.json",
    },
    pattern = patterns[name],
    filter = function(m) return activation_of(m.returning[1]) ~= nil end,
    replacement = function(m)
      local a = activation_of(m.returning[1])
      local function fused(x, w, b, shape)
        local y
        if with_view then
          y = kernels.linear_act(x, w, b, a, shape)
        else
          y = kernels.linear_act(x, w, b, a)
        end
        if outputs == 1 then return y end
        return { y, y }
      end
      if with_view then
        return graft.trace(function(x, w, b, shape) return fused(x, w, b, shape) end)
      end
      return graft.trace(function(x, w, b) return fused(x, w, b) end)
    end,
  }
end

return graft.rules {
  rule("linear_act", false, 1),
  rule("linear_view_act", true, 1),
  rule("linear_act_clone", false, 2),
  rule("linear_view_act_clone", true, 2),
}
