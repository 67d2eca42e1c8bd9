-- memory_aware: a rewrite that trades memory, kept only where the model's peak allows it.
--
-- A backend without a hardswish kernel runs `x * hardsigmoid(x)` instead. Decomposed, the op
-- needs two new tensors beside x where the in-place `hardswish_` needed none, so where x is
-- large the graph's memory peak rises. The rule's `keep` check measures the peak (bytes live at
-- the busiest step, from liveness over the whole graph) before and after each rewrite and undoes
-- the rewrites that raise it; `meta_functions` computes the shapes of the new inner node
-- (hardsigmoid) so that the check can size it. Then the nodes are reordered if that lowers the
-- peak, and the graph is planned into one arena.
--
--   graft run examples/pipelines/memory_aware.lua examples/graphs/mobilenet_v3_small.aten.json -o out.json
local aten = graft.ops.aten
local functions = require("meta.functions")

local function mib(bytes) return string.format("%.2f MiB", bytes / 1048576) end

local decompose = graft.rules {
  graft.rule {
    name = "hardswish_decompose",
    pattern = graft.trace(function(x) return aten.hardswish_.default(x) end),
    replacement = graft.trace(function(x) return aten.mul.Tensor(x, aten.hardsigmoid.default(x)) end),
    keep = function(change) return change.peak_after <= change.peak_before end,
    meta_functions = functions,
  },
}

return graft.pipeline {
  name = "memory_aware",
  passes = {
    graft.pass { name = "decompose_where_memory_allows", run = function(g)
      local before = g:memory_peak()
      local r = g:apply(decompose, { mode = "once" })
      local s = r.rules[1]
      local left = {}
      for node in g:nodes() do
        if node.target == "torch.ops.aten.hardswish_.default" then left[#left + 1] = node.name end
      end
      print(string.format("decompose: %d of %d hardswish_ calls decomposed, %d undone (would raise the peak): %s",
                          s.rewrites, s.matches, s.undone, table.concat(left, ", ")))
      print(string.format("decompose: peak %s before, %s after", mib(before), mib((g:memory_peak()))))
    end },
    graft.pass { name = "schedule", run = function(g)
      local s = g:schedule_for_memory()
      print(string.format("schedule: peak %s -> %s (%d nodes moved)", mib(s.peak_before), mib(s.peak_after), s.moved))
    end },
    graft.pass { name = "plan", run = function(g)
      local p = g:plan_memory()
      print(string.format("plan: arena %s, lower bound %s (%.2f%% above), planner %s, %d tensors live at the peak",
                          mib(p.arena), mib(p.lower_bound), p.gap_percent, p.planner, #p.live_at_peak))
    end },
  },
}
