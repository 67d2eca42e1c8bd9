-- Benchmark rule that matches nothing in the benchmark graphs (its target is absent): the cost
-- of a fixed-point sweep that only looks.
local aten = graft.ops.aten
return graft.rules {
  graft.rule {
    name = "absent",
    pattern = graft.trace(function(x) return aten.hardswish.default(x) end),
    replacement = graft.trace(function(x) return aten.relu.default(x) end),
  },
}
