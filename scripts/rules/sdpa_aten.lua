-- sdpa_aten: fuse scaled dot-product attention in ATen graphs (graft_fx export --mode aten)
-- into one call to torch's own kernel, as Inductor's fuse_attention patterns do:
--
--   bmm(softmax(bmm(q / scale, k^T), -1), v)  ->  aten._scaled_dot_product_attention(q, k, v)[0]
--
-- The kernel scales q by 1/sqrt(head dim), so the rule fires only where `scale` is exactly
-- sqrt(head dim) (read from q's tensor_meta) and 1/scale is a power of two, so that
-- multiplying by it rounds exactly as dividing by `scale` does: the result is bit-identical
-- (tests/python/test_rule_library.py checks ViT-B/16 in PyTorch). ATen graphs traced with
-- autograd keep a dead `detach` of the softmax, which is a use outside the pattern: run
-- passes.remove_detach first (scripts/pipelines/fuse_attention.lua does).
--
--   graft match scripts/rules/sdpa_aten.lua examples/graphs/vit_b_16.aten.json
--   graft explain scripts/rules/sdpa_aten.lua examples/graphs/vit_b_16.aten.json
local aten = graft.ops.aten

local function power_of_two(x)
  if x <= 0 then return false end
  while x >= 2 do x = x / 2 end
  while x < 1 do x = x * 2 end
  return x == 1
end

--- The head dim of q: the last entry of its tensor_meta shape, or nil.
local function head_dim(q)
  local tm = q.meta.tensor_meta
  local shape = tm and tm.shape
  return shape and shape[#shape]
end

local pattern = graft.trace(function(q, k, v, scale)
  local scores = aten.bmm.default(aten.div.Tensor(q, scale), aten.transpose.int(k, -2, -1))
  return aten.bmm.default(aten._softmax.default(scores, -1, false), v)
end)

-- The replacement takes the pattern's inputs by position, `scale` included.
local fused = graft.trace(function(q, k, v, scale)  -- luacheck: no unused args
  local out = graft.ns("_operator").getitem(aten._scaled_dot_product_attention.default(q, k, v), 0)
  return out
end)

return graft.rules {
  graft.rule {
    name = "sdpa",
    examples = { "../../examples/graphs/vit_b_16.aten.json" },
    pattern = pattern,
    replacement = fused,
    filter = function(m)
      local q, scale = m.inputs[1], m.inputs[4]
      local d = head_dim(q)
      return math.type(scale) == "float" and type(d) == "number" and scale * scale == d and power_of_two(1 / scale)
    end,
  },
}
