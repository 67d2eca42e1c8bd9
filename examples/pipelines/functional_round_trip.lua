-- functional_round_trip: the operator-semantics passes in the order a backend runs them, on a
-- real ATen graph with in-place ops (MobileNetV3-Small: relu_, hardswish_, add_):
--
--   normalise      every call in one spelling (positional up to `*`, defaults written out)
--   functionalise  in-place calls and writes into views become functional calls
--   clean up       the views and clones the writes left unused
--   fuse           the classifier's Linear -> Hardswish into one kernel call (rules/linear_act_aten)
--   re-inplace     functional calls whose input dies there write into it again, saving memory
--   check meta     every node's shape, dtype and strides recomputed from the input's
--                  (scripts/meta) and compared with the meta the passes kept; the fused kernel
--                  is an op of our own, so it gets a meta function here
--
-- Each step prints what it did. The result computes exactly what the model computes
-- (tests/python/test_functional_round_trip.py runs it in PyTorch), and every node's meta is
-- what PyTorch computes, on ViT-B/16 and Swin-T too (tests/python/test_functional_meta.py).
--
--   graft run examples/pipelines/functional_round_trip.lua examples/graphs/mobilenet_v3_small.aten.json -o out.json
local fuse = require("rules.linear_act_aten")
local functions = require("meta.functions")

-- graft.linear_act(x, w, b, act[, shape]): F.linear, then a view to `shape` if given
functions["torch.ops.graft.linear_act.default"] = function(a)
  local out = functions["aten::linear"]({ input = a[1], weight = a[2] })
  local shape = a[5] or a.shape
  if shape then return functions["aten::view"]({ self = out, size = shape }) end
  return out
end

return graft.pipeline {
  name = "functional_round_trip",
  passes = {
    graft.pass { name = "normalize", run = function(g)
      local r = g:normalize_args()
      print(string.format("normalize: %d calls rewritten, %d already canonical, %d without a schema, %d skipped",
                          r.changed, r.unchanged, r.no_schema, #r.skipped))
    end },
    graft.pass { name = "functionalize", run = function(g)
      local r = g:functionalize()
      print(string.format("functionalize: %d writes replaced, %d scatters, %d views made again, %d inputs to copy back",
                          r.writes, r.scatters, r.views_replayed, #r.copy_backs))
    end },
    "dead_code_elimination",
    fuse:pass { name = "fuse_linear_act" },
    graft.pass { name = "reinplace", run = function(g)
      local r = g:reinplace()
      print(string.format("reinplace: %d of %d candidates written in place", r.done, #r.decisions))
      local shown = 0
      for _, d in ipairs(r.decisions) do
        if not d.done and shown < 3 then  -- the first few reasons are enough
          print(string.format("  kept %s: %s", d.node.name, d.reason))
          shown = shown + 1
        end
      end
    end },
    graft.pass { name = "check_meta", run = function(g)
      local r = g:propagate_meta(functions, { check = true })
      print(string.format("check meta: %d nodes recomputed, %d differ from the meta the passes kept",
                          r.computed, #r.mismatches))
      assert(#r.mismatches == 0 and r.unknown == 0, "meta differs")
    end },
  },
  checks = { "lint" },
}
