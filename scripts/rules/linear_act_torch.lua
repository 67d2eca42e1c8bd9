-- linear_act_torch: fuse a linear layer and the activation after it in the Torch-level graphs
-- torch.compile hands a backend (dynamo's graphs: functional calls, parameters as inputs) into one
-- call of the operator graft::linear_act (graft_fx/kernels.py):
--
--   act(torch._C._nn.linear(x, w, b))  ->  graft.linear_act(x, w, b, "act")
--
-- act is torch._C._nn.gelu / F.gelu (approximate 'none' or 'tanh'), torch.relu / F.relu,
-- F.hardswish, F.silu, torch.sigmoid / F.sigmoid, torch.tanh / F.tanh, F.hardsigmoid, with
-- inplace= passed or not, by keyword or by position (dynamo writes F.hardswish(h, True) for
-- MobileNetV3's nn.Hardswish(inplace=True)). ViT-B/16's 12, Swin-T's 12 and ConvNeXt-T's 18 MLP
-- blocks, MobileNetV3-Small's classifier.
--
-- Exact: the operator runs F.linear (torch._C._nn.linear itself) and the activation's own
-- function out of place; the linear's output is a fresh tensor nothing else reads, so computing
-- the activation out of place gives the same values (tests/python/test_rule_library_fusions.py
-- checks the outputs bit for bit).
--
--   torch.compile(model, backend=graft.backend("scripts/rules/linear_act_torch.lua", then="inductor"))
local nn, F, torch = graft.ns("torch._C._nn"), graft.ns("torch.nn.functional"), graft.ns("torch")
local graft_ops = graft.ops.graft

--- activation target -> graft_fx.kernels.ACTIVATIONS name (gelu: see activation_of)
local ACTIVATION = {
  ["torch._C._nn.gelu"] = "gelu", ["torch.nn.functional.gelu"] = "gelu",
  ["torch.relu"] = "relu", ["torch.nn.functional.relu"] = "relu",
  ["torch.nn.functional.hardswish"] = "hardswish", ["torch.nn.functional.silu"] = "silu",
  ["torch.sigmoid"] = "sigmoid", ["torch.nn.functional.sigmoid"] = "sigmoid",
  ["torch.tanh"] = "tanh", ["torch.nn.functional.tanh"] = "tanh",
  ["torch.nn.functional.hardsigmoid"] = "hardsigmoid",
}

local act = graft.one_of(nn.gelu, F.gelu, torch.relu, F.relu, F.hardswish, F.silu, torch.sigmoid, F.sigmoid,
  torch.tanh, F.tanh, F.hardsigmoid)

--- The kernel's name for the activation node, or nil (an unknown gelu approximation, an
--- argument the kernel does not take).
local function activation_of(node)
  local name = ACTIVATION[node.target]
  if name ~= "gelu" then return name end
  local approximate = node:kwarg("approximate") or node:arg(2)  -- gelu's second argument
  if approximate == nil or approximate == "none" then return "gelu" end
  if approximate == "tanh" then return "gelu_tanh" end
  return nil
end

local function rule(name, pattern)
  return graft.rule {
    name = name,
    pattern = pattern,
    filter = function(m) return activation_of(m.returning[1]) ~= nil end,
    replacement = function(m)
      local a = activation_of(m.returning[1])
      return graft.trace(function(x, w, b) return graft_ops.linear_act.default(x, w, b, a) end)
    end,
  }
end

local optional = graft.kw { approximate = graft.optional(graft.any), inplace = graft.optional(graft.any) }

return graft.rules {
  rule("torch_linear_act", graft.trace(function(x, w, b)
    return act(nn.linear(x, w, b), optional)
  end)),
  -- inplace by position: F.hardswish(h, True), F.relu(h, False), ...
  rule("torch_linear_act_inplace", graft.trace(function(x, w, b)
    return act(nn.linear(x, w, b), graft.any)
  end)),
}
