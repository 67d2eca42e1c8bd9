-- propagate_meta: every node's tensor_meta (shape, dtype, strides, device) computed from the
-- graph inputs' by the meta functions in scripts/meta, and a summary printed. Nodes no meta
-- function covers keep what was recorded for them.
--
--   graft run scripts/passes/propagate_meta.lua G.json -o out.json
local functions = require("meta.functions")

return graft.pass {
  name = "propagate_meta",
  run = function(g)
    local r = g:propagate_meta(functions)
    print(string.format("propagate_meta: %d computed, %d kept as recorded, %d unknown", r.computed, r.kept, r.unknown))
    for target, count in pairs(r.missing) do
      print(string.format("  no meta function for %s (%d)", target, count))
    end
  end,
}
