-- propagate_meta: every node's tensor_meta (shape, dtype, strides, device) computed from the
-- graph inputs' by the meta functions in scripts/meta, a summary printed, and g:propagate_meta's
-- report returned (the pass's `result` in the run's report; graft.propagate_meta in Python).
-- Nodes no meta function covers keep what was recorded for them.
--
--   graft run scripts/passes/propagate_meta.lua G.json -o out.json
local functions = require("meta.functions")

return graft.pass {
  name = "propagate_meta",
  run = function(g)
    local r = g:propagate_meta(functions)
    print(string.format("propagate_meta: %d computed, %d kept as recorded, %d unknown", r.computed, r.kept, r.unknown))
    local targets = {}
    for target in pairs(r.missing) do targets[#targets + 1] = target end
    table.sort(targets) -- printed in the same order on every run
    for _, target in ipairs(targets) do
      print(string.format("  no meta function for %s (%d)", target, r.missing[target]))
    end
    return r
  end,
}
