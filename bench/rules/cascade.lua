-- Benchmark rules: ten rules that feed each other, relu(op_i(a, b)) -> relu(op_{i+1}(a, b)), on
-- graft_rules_bench's add/relu chains: every block is rewritten ten times (add -> sub -> ... ->
-- pow), so a 1M-node chain takes 5M rewrites to reach the fixed point.
local torch = graft.ns("torch")
local ops = { "add", "sub", "mul", "div", "maximum", "minimum", "atan2", "hypot", "fmod", "remainder", "pow" }
local rules = {}
for i = 1, #ops - 1 do
  local from, to = torch[ops[i]], torch[ops[i + 1]]
  rules[i] = graft.rule {
    name = ops[i] .. "_to_" .. ops[i + 1],
    pattern = graft.trace(function(a, b) return torch.relu(from(a, b)) end),
    replacement = graft.trace(function(a, b) return torch.relu(to(a, b)) end),
  }
end
return graft.rules(rules)
