-- Benchmark rule: relu(add(a, b)) -> relu(sub(a, b)) on graft_rules_bench's add/relu chains.
local torch = graft.ns("torch")
return graft.rules {
  graft.rule {
    name = "add_relu",
    pattern = graft.trace(function(a, b) return torch.relu(torch.add(a, b)) end),
    replacement = graft.trace(function(a, b) return torch.relu(torch.sub(a, b)) end),
  },
}
