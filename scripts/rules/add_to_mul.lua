-- add_to_mul: the first example of the torch.fx guide "Writing Graph Transformations on ATen
-- IR" (replace_add_with_mul) as a rule: every
-- torch.ops.aten.add.Tensor(x, y) becomes torch.ops.aten.mul.Tensor(x, y). It changes what the
-- model computes on purpose: it is the tutorial's example of a rewrite, and its test checks the
-- result equals what the guide's own torch.fx code makes of the same graph.
--
--   graft run scripts/rules/add_to_mul.lua examples/graphs/resnet18.aten.json -o out.json
local aten = graft.ops.aten

return graft.rules {
  graft.rule {
    name = "add_to_mul",
    exact = false, -- it changes what the model computes: graft verify reports it, unchecked
    pattern = graft.trace(function(x, y) return aten.add.Tensor(x, y) end),
    replacement = graft.trace(function(x, y) return aten.mul.Tensor(x, y) end),
  },
}
