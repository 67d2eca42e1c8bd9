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
-- nn.GELU has a setting the graph file does not record (`approximate`, 'none' or 'tanh'), so
-- the rule `linear_gelu` assumes the default 'none' and is disabled: enable it when you know
-- (ViT-B/16's 12 MLP blocks):
--
--   local rules = require("rules.linear_act_fx")
--   return rules:pass { enable = { "linear_gelu" } }
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

--- activation module class -> graft_fx.kernels.ACTIVATIONS name
local function rule(class, activation, enabled)
  return graft.rule {
    name = "linear_" .. activation,
    examples = { "../../examples/graphs/rule_examples.fx.json" },
    enabled = enabled,
    pattern = graft.trace(function(x)
      local lin = graft.module("torch.nn.Linear", "lin")
      local act = graft.module(class, "act")
      return act(lin(x))
    end),
    replacement = function(m)
      local bias = has_bias(m)
      return graft.trace(function(x)
        return kernels.linear_act(x, graft.get_attr("lin.weight"),
          bias and graft.get_attr("lin.bias") or graft.None, activation)
      end)
    end,
  }
end

return graft.rules {
  rule("torch.nn.ReLU", "relu", true),
  rule("torch.nn.Hardswish", "hardswish", true),
  rule("torch.nn.SiLU", "silu", true),
  rule("torch.nn.Sigmoid", "sigmoid", true),
  rule("torch.nn.Tanh", "tanh", true),
  rule("torch.nn.Hardsigmoid", "hardsigmoid", true),
  rule("torch.nn.GELU", "gelu", false),
}
