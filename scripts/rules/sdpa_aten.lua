-- sdpa_aten: fuse scaled dot-product attention in ATen graphs (graft_fx export --mode aten)
-- into one call to torch's CPU attention kernel, as Inductor's fuse_attention patterns do:
--
--   the math form of attention  ->  aten._scaled_dot_product_flash_attention_for_cpu(q, k, v)[0]
--
-- The math form is what torch's own decomposition of that kernel traces to (torch.export and
-- `graft_fx export --decompose aten._scaled_dot_product_flash_attention_for_cpu` write it): q and
-- k^T each multiplied by sqrt(1/sqrt(head dim)), batched matmuls through expand and view, a
-- _safe_softmax over the last dim, and the kernel's output layout restored by
-- permute/clone/permute. The filter checks every shape against q, k and v's tensor_meta (the
-- expands change nothing, the views only split and merge the batch and head dims) and the
-- scale against the head dim, so the fused kernel computes what the original kernel computed:
-- the result is bit-identical (tests/python/test_rule_library.py checks ViT-B/16 in PyTorch).
--
--   graft match scripts/rules/sdpa_aten.lua examples/graphs/vit_b_16.aten.json
--   graft explain scripts/rules/sdpa_aten.lua examples/graphs/vit_b_16.aten.json
local aten = graft.ops.aten

local pattern = graft.trace(function(q, k, v, scale, q4, k4, w4, v4, q3, k3, scores4, w3, v3, out4)
  local qs = aten.mul.Scalar(q, scale)
  local ks = aten.mul.Scalar(aten.transpose.int(k, -2, -1), scale)
  local scores = aten.bmm.default(aten.view.default(aten.expand.default(qs, q4), q3),
    aten.view.default(aten.expand.default(ks, k4), k3))
  local weights = aten._safe_softmax.default(aten.view.default(scores, scores4), -1)
  local out = aten.bmm.default(aten.view.default(aten.expand.default(weights, w4), w3),
    aten.view.default(aten.expand.default(v, v4), v3))
  local nlhe = aten.clone.default(aten.permute.default(aten.view.default(out, out4), { 2, 0, 1, 3 }),
    graft.kw { memory_format = graft.memory_format("contiguous_format") })
  return aten.permute.default(nlhe, { 1, 2, 0, 3 })
end)

-- The replacement takes the pattern's inputs by position; only q, k and v are used.
-- luacheck: push no unused args
local fused = graft.trace(function(q, k, v, scale, q4, k4, w4, v4, q3, k3, scores4, w3, v3, out4)
  return graft.ns("_operator").getitem(aten._scaled_dot_product_flash_attention_for_cpu.default(q, k, v), 0)
end)
-- luacheck: pop

local shapes = require("lib.shapes")
local shape_of, same = shapes.shape_of, shapes.same

return graft.rules {
  graft.rule {
    name = "sdpa",
    examples = { "../../examples/graphs/vit_b_16.aten.json" },
    pattern = pattern,
    replacement = fused,
    filter = function(m)
      local i = m.inputs
      local qs, ks, vs = shape_of(i[1]), shape_of(i[2]), shape_of(i[3])
      if not (qs and ks and vs and #qs == 4 and #ks == 4 and #vs == 4) then return false end
      local n, h, l, e, s = qs[1], qs[2], qs[3], qs[4], ks[3]
      for _, d in ipairs { n, h, l, e, s } do
        if math.type(d) ~= "integer" then return false end -- a symbolic size: not checked here
      end
      local scale = i[4]
      return same(ks, { n, h, s, e }) and same(vs, { n, h, s, e })
        and math.type(scale) == "float" and scale == math.sqrt(1 / math.sqrt(e))
        and same(i[5], { n, h, l, e }) and same(i[6], { n, h, e, s }) and same(i[7], { n, h, l, s })
        and same(i[8], { n, h, s, e }) and same(i[9], { n * h, l, e }) and same(i[10], { n * h, e, s })
        and same(i[11], { n, h, l, s }) and same(i[12], { n * h, l, s }) and same(i[13], { n * h, s, e })
        and same(i[14], { n, h, l, e })
    end,
  },
}
