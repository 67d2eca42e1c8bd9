-- quant_matmul: a backend's quantised matmul called on a transposed weight becomes the
-- backend's kernel that takes the weight as stored. One pattern covers the call with and
-- without its optional arguments: graft reads npu::npu_quant_matmul's schema from torch's
-- registry (examples/python/torch2_workflows.py registers it with torch.library), so an
-- argument the call leaves out is compared, and bound, as its default (None).
local aten, npu = graft.ops.aten, graft.ops.npu

return graft.rules {
  graft.rule {
    name = "quant_matmul_pretransposed",
    pattern = graft.trace(function(x1, x2, scale, offset, pertoken, bias)
      return npu.npu_quant_matmul.default(x1, aten.transpose.int(x2, 0, 1), scale,
        graft.kw { offset = offset, pertoken_scale = pertoken, bias = bias })
    end),
    replacement = graft.trace(function(x1, x2, scale, offset, pertoken, bias)
      return npu.npu_quant_matmul_t.default(x1, x2, scale,
        graft.kw { offset = offset, pertoken_scale = pertoken, bias = bias })
    end),
  },
}
