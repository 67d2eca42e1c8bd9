-- linear_act_fx: fuse an nn.Linear module and the activation module after it, in FX graphs
-- (graft_fx export --mode symbolic, where modules are leaves), into one call of
-- graft_fx.kernels.linear_act on the Linear's own parameters:
--
--   act(lin(x))  ->  graft_fx.kernels.linear_act(x, lin.weight, lin.bias, "act")
--
-- Modules are matched by class wherever they sit (torch.nn.Linear exactly: subclasses such as
-- MultiheadAttention's NonDynamicallyQuantizableLinear are not matched); the replacement reads
-- the matched Linear's parameters by the pattern's name for it (`lin.weight`), and passes None
-- for a Linear without bias. MobileNetV3-Small: the classifier's Linear -> Hardswish.
--
-- Exact: nn.Linear computes F.linear(x, weight, bias) and the kernel does the same, then the
-- activation's own function (inplace=True only changes where the result is written, and the
-- Linear's output is a fresh tensor nothing else reads), so the outputs are bit-identical
-- (tests/python/test_rule_library_fusions.py checks MobileNetV3-Small in PyTorch).
--
-- nn.GELU's `approximate` ('none' or 'tanh') is read from the module's settings the graph file
-- records (graft_fx export writes them); a file without them is left alone. ViT-B/16's 12 MLP
-- blocks.
--
--   graft match scripts/rules/linear_act_fx.lua examples/graphs/mobilenet_v3_small.fx.json
--   graft run scripts/rules/linear_act_fx.lua examples/graphs/mobilenet_v3_small.fx.json -o out.json
local kernels = graft.ns("graft_fx.kernels")

--- Whether the module a match bound as `lin` has a bias parameter.
local function has_bias(m)
  local node = m.nodes.lin
  local info = node.graph:module(node.target)
  for _, p in ipairs(info and info.parameters or {}) do
    if p.name == "bias" then return true end
  end
  return false
end

--- The kernel's name for GELU: its `approximate` setting as the graph file recorded it
--- ("none" -> gelu, "tanh" -> gelu_tanh); nil for a file that did not record it.
local function gelu_kind(m)
  local module = m.nodes.act.module
  local approximate = module and module.settings and module.settings.approximate
  if approximate == "none" then return "gelu" end
  if approximate == "tanh" then return "gelu_tanh" end
  return nil
end

--- activation module class -> graft_fx.kernels.ACTIVATIONS name (or a function of the match)
local function rule(class, name, activation)
  local kind = type(activation) == "function" and activation or function() return activation end
  return graft.rule {
    name = "linear_" .. name,
    examples = { "../../examples/graphs/rule_examples.fx.json" },
    pattern = graft.trace(function(x)
      local lin = graft.module("torch.nn.Linear", "lin")
      local act = graft.module(class, "act")
      return act(lin(x))
    end),
    filter = function(m) return kind(m) ~= nil end,
    replacement = function(m)
      local bias, act = has_bias(m), kind(m)
      return graft.trace(function(x)
        return kernels.linear_act(x, graft.get_attr("lin.weight"),
          bias and graft.get_attr("lin.bias") or graft.None, act)
      end)
    end,
  }
end

return graft.rules {
  rule("torch.nn.ReLU", "relu", "relu"),
  rule("torch.nn.Hardswish", "hardswish", "hardswish"),
  rule("torch.nn.SiLU", "silu", "silu"),
  rule("torch.nn.Sigmoid", "sigmoid", "sigmoid"),
  rule("torch.nn.Tanh", "tanh", "tanh"),
  rule("torch.nn.Hardsigmoid", "hardsigmoid", "hardsigmoid"),
  rule("torch.nn.GELU", "gelu", gelu_kind),
}
