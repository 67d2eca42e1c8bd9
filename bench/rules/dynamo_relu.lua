-- dynamo_relu: the activation torchvision's models call through nn.ReLU(inplace=True), as dynamo
-- records it (torch.nn.functional.relu(x, inplace = True)), becomes torch.relu(x): the rewrite
-- bench/fx_compile_bench.py times inside torch.compile, with torch.fx's replace_pattern doing
-- the same in the same run.
local F = graft.ns("torch.nn.functional")
local torch = graft.ns("torch")

return graft.rules {
  graft.rule {
    name = "inplace_relu",
    pattern = graft.trace(function(x) return F.relu(x, graft.kw { inplace = true }) end),
    replacement = graft.trace(function(x) return torch.relu(x) end),
  },
}
