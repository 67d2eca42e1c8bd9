-- Elementwise ops: broadcasting, type promotion, and the layout TensorIterator gives the result.
local D = require("meta.dtypes")
local layout = require("meta.layout")
local shape = require("meta.shape")

local F = {}

local function is_tensor(v) return type(v) == "table" and v.shape ~= nil end

--- `t` as TensorIterator sees it when the op computes in `common`: on the CPU an input of
--- another dtype is first copied to `common` (`t.to(common)`: the copy keeps a dense layout,
--- else takes the row-major or channels-last one).
local function as_common(t, common)
  if common == nil or t.dtype == common or (t.device ~= nil and t.device ~= "cpu") then return t end
  local stride = layout.for_format(t.shape, "preserve_format", t)
  return { shape = t.shape, dtype = common, stride = stride, device = t.device }
end

local SCALAR = { shape = {}, stride = {} } -- a Python number: a 0-dim operand to TensorIterator

--- The result of an elementwise op over the operands (tensors and scalars; nil skipped) that
--- computes in `common` (nil: no conversion) and returns `dtype`.
local function pointwise(dtype, common, ...)
  local tensors, shapes = {}, {}
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    if is_tensor(v) then
      tensors[#tensors + 1] = as_common(v, common)
      shapes[#shapes + 1] = v.shape
    elseif v ~= nil then
      tensors[#tensors + 1] = SCALAR
    end
  end
  local out = shape.broadcast(table.unpack(shapes))
  return shape.tensor(out, dtype, layout.dense_like(tensors, out))
end
F.pointwise = pointwise

--- Only tensors: Scalar arguments decide the dtype but are not operands of the iteration.
local function tensor_or_nil(v) return is_tensor(v) and v or nil end

-- Binary ops computing in the promoted type of their operands.
local function binary(a)
  local t = D.result_type(a.self, a.other)
  return pointwise(t, t, a.self, a.other)
end
for _, name in ipairs({ "add", "sub", "rsub", "mul", "maximum", "minimum", "fmax", "fmin", "remainder", "fmod",
  "bitwise_and", "bitwise_or", "bitwise_xor", "__and__", "__or__", "__xor__", "__lshift__", "__rshift__",
  "bitwise_left_shift", "bitwise_right_shift", "floor_divide", "heaviside", "xlogy", "nextafter" }) do
  F["aten::" .. name] = binary
end

-- Binary ops whose integer results are floats.
local function binary_float(a)
  local t = D.to_float(D.result_type(a.self, a.other))
  return pointwise(t, t, a.self, a.other)
end
for _, name in ipairs({ "atan2", "hypot", "copysign", "logaddexp", "logaddexp2" }) do
  F["aten::" .. name] = binary_float
end

F["aten::div"] = function(a)
  local t = D.result_type(a.self, a.other)
  if a.rounding_mode == nil then t = D.to_float(t) end
  return pointwise(t, t, a.self, a.other)
end
F["aten::true_divide"] = binary_float

-- A number base or exponent is no operand of pow's iteration (pow.Tensor_Scalar is a unary op):
-- [1, 5, 6] strides [6, 6, 1] ** 2 is row-major, [30, 6, 1], where + 2 keeps [6, 6, 1].
F["aten::pow"] = function(a)
  local t = D.result_type(a.self, a.exponent)
  return pointwise(t, t, tensor_or_nil(a.self), tensor_or_nil(a.exponent))
end
F["aten::float_power"] = function(a)
  local t = D.is_complex(D.result_type(a.self, a.exponent)) and "complex128" or "float64"
  return pointwise(t, t, tensor_or_nil(a.self), tensor_or_nil(a.exponent))
end

-- Comparisons and logical ops: bool.
local function to_bool(a) return pointwise("bool", D.result_type(a.self, a.other), a.self, a.other) end
for _, name in ipairs({ "eq", "ne", "lt", "le", "gt", "ge", "greater", "less", "greater_equal", "less_equal",
  "not_equal", "logical_and", "logical_or", "logical_xor" }) do
  F["aten::" .. name] = to_bool
end

-- Unary ops that keep the dtype.
local function unary(a) return pointwise(a.self.dtype, nil, a.self) end
for _, name in ipairs({ "relu", "neg", "positive", "gelu", "silu", "mish", "elu", "selu", "celu",
  "leaky_relu", "hardswish", "hardsigmoid", "hardshrink", "softshrink", "softplus", "threshold",
  "sign", "sgn", "floor", "ceil", "round", "trunc", "frac",
  "bitwise_not", "square", "prelu", "glu_jvp", "logit",
  "sigmoid_backward", "threshold_backward", "hardtanh_backward" }) do
  F["aten::" .. name] = unary
end

-- Unary ops torch writes into empty_like(self), not into what TensorIterator allocates: a dense
-- input's strides are kept as they are, size-1 dims included ([1, 5, 6] strides [6, 6, 1] stays
-- so; relu makes it [30, 6, 1]).
local function like_self(float)
  return function(a)
    local t = a.self
    local dtype = float and D.to_float(t.dtype) or t.dtype
    return shape.tensor(shape.copy(t.shape), dtype, layout.for_format(t.shape, "preserve_format", t))
  end
end
for _, name in ipairs({ "fill", "hardtanh", "relu6", "nan_to_num" }) do F["aten::" .. name] = like_self(false) end
for _, name in ipairs({ "deg2rad", "rad2deg" }) do F["aten::" .. name] = like_self(true) end

-- The lower or upper triangle: a new row-major tensor whatever the input's layout.
F["aten::tril"] = function(a) return shape.tensor(shape.copy(a.self.shape), a.self.dtype) end
F["aten::triu"] = F["aten::tril"]

-- Unary ops computing in floats.
local function unary_float(a)
  local t = D.to_float(a.self.dtype)
  return pointwise(t, t, a.self)
end
for _, name in ipairs({ "sigmoid", "tanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
  "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc", "erfinv",
  "reciprocal", "lgamma", "digamma", "i0", "sinc" }) do
  F["aten::" .. name] = unary_float
end

-- clamp promotes with its bounds (an int tensor clamped at 0.5 is float)
local function clamp(low, high)
  return function(a)
    local t = D.result_type(a.self, a[low], a[high])
    return pointwise(t, t, a.self, tensor_or_nil(a[low]), tensor_or_nil(high and a[high]))
  end
end
F["aten::clamp"] = clamp("min", "max")
F["aten::clip"] = clamp("min", "max")
F["aten::clamp_min"] = clamp("min")
F["aten::clamp_max"] = clamp("max")

-- Ternary ops broadcast all three operands.
F["aten::lerp"] = function(a)
  local t = D.result_type(a.self, a["end"])
  return pointwise(t, t, a.self, a["end"], tensor_or_nil(a.weight))
end
local function combine3(a)
  local t = D.result_type(a.self, a.tensor1, a.tensor2)
  return pointwise(t, t, a.self, a.tensor1, a.tensor2)
end
F["aten::addcmul"] = combine3
F["aten::addcdiv"] = combine3

F["aten::abs"] = function(a) return pointwise(D.to_real(a.self.dtype), nil, a.self) end

-- Tests: bool.
local function unary_bool(a) return pointwise("bool", nil, a.self) end
for _, name in ipairs({ "logical_not", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit" }) do
  F["aten::" .. name] = unary_bool
end

-- where converts self and other to their result type first, on every device
F["aten::where"] = function(a)
  local t = D.result_type(a.self, a.other)
  local function to(v) return is_tensor(v) and as_common(v, t) or v end
  return pointwise(t, nil, a.condition, to(a.self), to(a.other))
end

F["aten::masked_fill"] = function(a)
  local out = shape.broadcast(a.self.shape, a.mask.shape)
  return shape.tensor(out, a.self.dtype)
end

-- Copies: a new tensor in the requested memory format (preserve: like the input).
local function copy_of(t, dtype, format)
  return shape.tensor(shape.copy(t.shape), dtype or t.dtype, layout.for_format(t.shape, format or "preserve_format", t))
end
F.copy_of = copy_of

F["aten::clone"] = function(a) return copy_of(a.self, nil, a.memory_format) end
F["aten::lift_fresh_copy"] = function(a) return copy_of(a.self) end
F["aten::flip"] = function(a) return copy_of(a.self) end -- a new tensor laid out like `self`
F["aten::_to_copy"] = function(a)
  local t = copy_of(a.self, a.dtype, a.memory_format)
  t.device = a.device or a.self.device
  return t
end

-- x.to(...): the input itself when nothing changes, else a copy.
--- Whether `t` is laid out in `format` already (torch's to() then returns it as it is).
local function in_format(t, format)
  if format == nil or format == "preserve_format" then return true end
  if format == "contiguous_format" then return layout.is_contiguous(t.shape, t.stride) end
  if format == "channels_last" then return layout.is_channels_last(t.shape, t.stride) end
  return false
end

local function to(a, dtype, device)
  dtype = dtype or a.self.dtype
  device = device or a.self.device
  if dtype == a.self.dtype and device == a.self.device and not a.copy and in_format(a.self, a.memory_format) then
    return a.self
  end
  local t = copy_of(a.self, dtype, a.memory_format)
  t.device = device
  return t
end
F["aten::to.dtype"] = function(a) return to(a, a.dtype) end
F["aten::to.device"] = function(a) return to(a, a.dtype, a.device) end
F["aten::to.dtype_layout"] = function(a) return to(a, a.dtype, a.device) end
F["aten::to.other"] = function(a) return to(a, a.other.dtype, a.other.device) end
F["aten::type_as"] = function(a)
  if a.self.dtype == a.other.dtype then return a.self end
  return copy_of(a.self, a.other.dtype)
end

F["aten::contiguous"] = function(a)
  local format = a.memory_format or "contiguous_format"
  local want = layout.for_format(a.self.shape, format)
  local same = true
  for i, s in ipairs(want) do
    if a.self.shape[i] ~= 1 and a.self.stride[i] ~= s then same = false end
  end
  if same then return a.self end
  return shape.tensor(shape.copy(a.self.shape), a.self.dtype, want)
end

-- Random and dropout: the input's shape (and for native_dropout a bool mask).
F["aten::dropout"] = function(a)
  if not a.train then return a.input end
  return copy_of(a.input)
end
F["aten::native_dropout"] = function(a)
  local out = copy_of(a.input)
  return { out, copy_of(a.input, "bool") }
end
F["aten::bernoulli"] = function(a) return copy_of(a.self) end

return F
