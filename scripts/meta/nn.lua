-- Neural-network ops: softmax, normalisations, embedding, attention.
local S = require("meta.symbolic")
local layout = require("meta.layout")
local shape = require("meta.shape")

local F = {}

local copy = shape.copy

F["aten::_softmax"] = function(a)
  local dtype = a.half_to_float and "float32" or a.self.dtype
  return shape.tensor(copy(a.self.shape), dtype)
end
F["aten::_log_softmax"] = F["aten::_softmax"]
F["aten::softmax"] = function(a) return shape.tensor(copy(a.self.shape), a.dtype or a.self.dtype) end
F["aten::log_softmax"] = F["aten::softmax"]
-- softmax that gives 0 where a whole row is -inf (torch 2's attention decomposition)
F["aten::_safe_softmax"] = F["aten::softmax"]

-- Statistics have the input's dtype (torch's CPU kernels, bfloat16 included).
local function stat_dtype(t) return t end

F["aten::native_layer_norm"] = function(a)
  local x = a.input
  local n, k = #x.shape, #a.normalized_shape
  local stats = {}
  for i = 1, n do stats[i] = i <= n - k and x.shape[i] or 1 end
  return {
    shape.tensor(copy(x.shape), x.dtype),
    shape.tensor(stats, stat_dtype(x.dtype)),
    shape.tensor(copy(stats), stat_dtype(x.dtype)),
  }
end
F["aten::layer_norm"] = function(a) return shape.tensor(copy(a.input.shape), a.input.dtype) end

local function batch_norm_output(x)
  return shape.tensor(copy(x.shape), x.dtype, layout.for_format(x.shape, layout.suggest_format(x)))
end

F["aten::native_batch_norm"] = function(a)
  local x = a.input
  local stats = a.training and { x.shape[2] } or { 0 }
  local stat = stat_dtype(x.dtype)
  return { batch_norm_output(x), shape.tensor(stats, stat), shape.tensor(copy(stats), stat) }
end
F["aten::_native_batch_norm_legit"] = function(a)
  local x = a.input
  return { batch_norm_output(x), shape.tensor({ x.shape[2] }, stat_dtype(x.dtype)),
    shape.tensor({ x.shape[2] }, stat_dtype(x.dtype)) }
end
F["aten::_native_batch_norm_legit_no_training"] = function(a)
  local x = a.input
  return { batch_norm_output(x), shape.tensor({ 0 }, stat_dtype(x.dtype)), shape.tensor({ 0 }, stat_dtype(x.dtype)) }
end
F["aten::batch_norm"] = function(a) return batch_norm_output(a.input) end
F["aten::instance_norm"] = function(a) return shape.tensor(copy(a.input.shape), a.input.dtype) end
F["aten::group_norm"] = function(a) return shape.tensor(copy(a.input.shape), a.input.dtype) end
F["aten::native_group_norm"] = function(a)
  local x = a.input
  return { batch_norm_output(x), shape.tensor({ a.N, a.group }, x.dtype), shape.tensor({ a.N, a.group }, x.dtype) }
end

F["aten::embedding"] = function(a)
  local out = copy(a.indices.shape)
  out[#out + 1] = a.weight.shape[#a.weight.shape]
  return shape.tensor(out, a.weight.dtype)
end

--- The attention output: the query's shape with the value's last dim.
local function attention_output(q, v)
  local out = copy(q.shape)
  out[#out] = v.shape[#v.shape]
  return shape.tensor(out, q.dtype)
end

--- The attention weights: (..., L, S).
local function attention_weights(q, k)
  local out = copy(q.shape)
  out[#out] = k.shape[#k.shape - 1]
  return shape.tensor(out, q.dtype)
end

F["aten::scaled_dot_product_attention"] = function(a) return attention_output(a.query, a.value) end
-- the private attention ops return the weights whether asked for or not
local function output_and_weights(a)
  return { attention_output(a.query, a.value), attention_weights(a.query, a.key) }
end
F["aten::_scaled_dot_product_attention_math"] = output_and_weights

-- torch 2's CPU attention kernel (q, k, v of one head size): the output laid out as the query
-- is (empty_like), and the log-sum-exp of each query row, (N, H, L) laid out as (N, L, H), in
-- float32 (float64 for float64 inputs).
F["aten::_scaled_dot_product_flash_attention_for_cpu"] = function(a)
  local q = a.query
  local n, h, l = q.shape[1], q.shape[2], q.shape[3]
  local out = shape.tensor(copy(q.shape), q.dtype, layout.for_format(q.shape, "preserve_format", q))
  local lse_dtype = q.dtype == "float64" and "float64" or "float32"
  return { out, shape.tensor({ n, h, l }, lse_dtype, { S.mul(h, l), 1, h }) }
end

F["aten::_native_multi_head_attention"] = function(a)
  local q, k = a.query, a.key
  local out = shape.tensor(copy(q.shape), q.dtype)
  if not a.need_weights then return { out, shape.tensor({ 0 }, q.dtype) } end
  local weights = { q.shape[1] }
  if not a.average_attn_weights then weights[#weights + 1] = a.num_head end
  weights[#weights + 1] = q.shape[2]
  weights[#weights + 1] = k.shape[2]
  return { out, shape.tensor(weights, q.dtype) }
end

F["aten::one_hot"] = function(a)
  if a.num_classes == nil or a.num_classes < 0 then return nil end -- the largest index decides
  local out = copy(a.self.shape)
  out[#out + 1] = a.num_classes
  return shape.tensor(out, "int64")
end

return F
