-- Benchmark rule: Inductor's first attention pattern (_sfdp_pattern_1: matmul(q, kᵀ), div,
-- softmax, matmul) in ATen ops, as graft_rules_bench's transformer stacks spell it, fused into
-- torch's kernel.
local aten = graft.ops.aten
return graft.rules {
  graft.rule {
    name = "sdpa_1",
    pattern = graft.trace(function(q, k, v, scale)
      local scores = aten.div.Tensor(aten.bmm.default(q, aten.transpose.int(k, -2, -1)), scale)
      return aten.bmm.default(aten._softmax.default(scores, -1, false), v)
    end),
    replacement = graft.trace(function(q, k, v, scale)  -- luacheck: no unused args (inputs bind by position)
      return aten.scaled_dot_product_attention.default(q, k, v)
    end),
  },
}
