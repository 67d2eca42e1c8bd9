-- linear_act_aten: fuse a linear layer and the activation after it, in ATen graphs, into one
-- call of the operator graft::linear_act (graft_fx/kernels.py registers it with torch.library):
--
--   act(addmm(b, x, t(w)))                  ->  graft.linear_act(x, w, b, "act")
--   act(view(addmm(b, x, t(w)), shape))     ->  graft.linear_act(x, w, b, "act", shape)
--   act(linear(x, w, b))                    ->  graft.linear_act(x, w, b, "act")
--
-- in every ATen form torch 2.14 makes: make_fx and AOT autograd write t(w) and view (or
-- _unsafe_view); torch.export's core ATen (run_decompositions) and inductor's post-grad graphs
-- write permute(w, [1, 0]) and reshape (the *_permute rules); torch.export's default graph keeps
-- aten.linear (linear_op_act). Only make_fx traced with autograd leaves dead clones, so the
-- *_clone rules have no permute form.
-- act is relu, gelu (approximate 'none' or 'tanh'), hardswish, silu, sigmoid, tanh or
-- hardsigmoid, out of place or in place (relu_, hardswish_, ...: the matmul's result is a
-- temporary nothing else reads, so computing the activation out of place is the same). ATen
-- graphs traced with autograd keep a dead `clone` of an in-place activation's input (saved for
-- backward); the *_clone rules match it too (it must have no users) and drop it.
-- ViT-B/16: the 12 MLP blocks (addmm -> view -> gelu); MobileNetV3-Small: the classifier's
-- Linear -> Hardswish (addmm -> hardswish_, with its dead clone); ResNet-18: none.
--
-- Exact: the operator runs F.linear, which for a 2-D input with a bias is
-- aten.addmm(b, x, w.t()) itself (ATen's at::linear), then the same view and the same
-- activation kernel, so the fused graph gives bit-identical outputs in PyTorch
-- (tests/python/test_rule_library_fusions.py checks the models and forms). Being an operator
-- with a fake implementation, it is a node torch.export's verifier, AOT autograd and inductor
-- take.
--
--   graft match scripts/rules/linear_act_aten.lua examples/graphs/vit_b_16.aten.json
--   graft explain scripts/rules/linear_act_aten.lua examples/graphs/vit_b_16.aten.json --rule linear_view_act
--   graft run scripts/rules/linear_act_aten.lua examples/graphs/vit_b_16.aten.json -o out.json
local aten = graft.ops.aten
local graft_ops = graft.ops.graft

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

--- w^T as each form spells it: make_fx and AOT autograd write aten.t; torch.export's
--- run_decompositions (core ATen) and inductor's post-grad graphs write permute(w, [1, 0]).
local TRANSPOSE = {
  t = function(w) return aten.t.default(w) end,
  permute = function(w) return aten.permute.default(w, { 1, 0 }) end,
}

--- the view after the matmul: view or _unsafe_view (make_fx, AOT), reshape (post-grad)
local view = graft.one_of(aten.view.default, aten._unsafe_view.default, aten.reshape.default)

local function activation(h)
  -- gelu may spell approximate= (checked by the filter); the others have no keyword
  return act(h, graft.kw { approximate = graft.optional(graft.any) })
end

--- The autograd residue of an in-place activation: a clone of its input that nothing uses.
local function dead_clone(h)
  return graft.constrain(aten.clone.default(h, graft.kw { memory_format = graft.optional(graft.any) }),
    { users = 0 })
end

--- The patterns of one transpose form.
local function patterns_for(form)
  local function linear(x, w, b)
    return aten.addmm.default(b, x, TRANSPOSE[form](w))
  end
  return {
    linear_act = graft.trace(function(x, w, b)
      return activation(linear(x, w, b))
    end),
    linear_view_act = graft.trace(function(x, w, b, shape)
      return activation(view(linear(x, w, b), shape))
    end),
    linear_act_clone = graft.trace(function(x, w, b)
      local h = linear(x, w, b)
      return { activation(h), dead_clone(h) }
    end),
    linear_view_act_clone = graft.trace(function(x, w, b, shape)
      local h = view(linear(x, w, b), shape)
      return { activation(h), dead_clone(h) }
    end),
  }
end
local patterns = { t = patterns_for("t"), permute = patterns_for("permute") }
-- torch.export's default graph (before run_decompositions): aten.linear itself
patterns.t.linear_op_act = graft.trace(function(x, w, b)
  return activation(aten.linear.default(x, w, b))
end)

--- The rule `name`: the fused call, once per output of the pattern (a dead clone's
--- replacement is never read; it just goes away with the clone).
local function rule(name, with_view, outputs, form)
  form = form or "t"
  return graft.rule {
    name = form == "t" and name or name .. "_" .. form,
    examples = {
      "../../examples/graphs/rule_examples.aten.json", "../../examples/graphs/mobilenet_v3_small.aten.json",
      "../../examples/graphs/vit_b_16.aten.json", "../../examples/graphs/rule_examples.export.json",
      "../../examples/graphs/rule_examples.core_aten.json",
    },
    pattern = patterns[form][name],
    filter = function(m) return activation_of(m.returning[1]) ~= nil end,
    replacement = function(m)
      local a = activation_of(m.returning[1])
      local function fused(x, w, b, shape)
        local y
        if with_view then
          y = graft_ops.linear_act.default(x, w, b, a, shape)
        else
          y = graft_ops.linear_act.default(x, w, b, a)
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
  rule("linear_op_act", false, 1),
  rule("linear_act", false, 1, "permute"),
  rule("linear_view_act", true, 1, "permute"),
}
