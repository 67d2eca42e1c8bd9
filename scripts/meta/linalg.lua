-- Matrix products, convolutions and pooling: sizes from the operands' dims and the settings.
local D = require("meta.dtypes")
local S = require("meta.symbolic")
local layout = require("meta.layout")
local shape = require("meta.shape")

local F = {}

local function dtype_of(a, b) return D.result_type(a, b) end

--- Sizes an operation needs equal (known ones: a symbolic size is taken to agree), as torch
--- checks them; `what` names the check in the error.
local function agree(what, x, y)
  if type(x) == "number" and type(y) == "number" and x ~= y then
    error(string.format("%s: size %d against %d", what, x, y), 0)
  end
end

local function rank(what, t, n)
  if #t.shape ~= n then error(string.format("%s: expected a %d-d tensor, got %d-d", what, n, #t.shape), 0) end
end

local function product(what, x, y)
  rank(what, x, 2)
  rank(what, y, 2)
  agree(what .. ": shapes cannot be multiplied", x.shape[2], y.shape[1])
  return { x.shape[1], y.shape[2] }
end

local function batch_product(what, x, y)
  rank(what, x, 3)
  rank(what, y, 3)
  agree(what .. ": batch sizes differ", x.shape[1], y.shape[1])
  agree(what .. ": shapes cannot be multiplied", x.shape[3], y.shape[2])
  return { x.shape[1], x.shape[2], y.shape[3] }
end

F["aten::mm"] = function(a) return shape.tensor(product("mm", a.self, a.mat2), dtype_of(a.self, a.mat2)) end
F["aten::addmm"] = function(a)
  return shape.tensor(product("addmm", a.mat1, a.mat2), dtype_of(a.mat1, a.mat2))
end
F["aten::bmm"] = function(a) return shape.tensor(batch_product("bmm", a.self, a.mat2), dtype_of(a.self, a.mat2)) end
F["aten::baddbmm"] = function(a)
  return shape.tensor(batch_product("baddbmm", a.batch1, a.batch2), dtype_of(a.batch1, a.batch2))
end
local function matrix_vector(what, m, v)
  rank(what, m, 2)
  rank(what, v, 1)
  agree(what .. ": shapes cannot be multiplied", m.shape[2], v.shape[1])
  return shape.tensor({ m.shape[1] }, dtype_of(m, v))
end
F["aten::mv"] = function(a) return matrix_vector("mv", a.self, a.vec) end
F["aten::addmv"] = function(a) return matrix_vector("addmv", a.mat, a.vec) end
F["aten::dot"] = function(a)
  rank("dot", a.self, 1)
  rank("dot", a.tensor, 1)
  agree("dot: sizes differ", a.self.shape[1], a.tensor.shape[1])
  return shape.tensor({}, dtype_of(a.self, a.tensor))
end
F["aten::vdot"] = F["aten::dot"]

--- torch.matmul's shape rules: vectors are promoted to matrices and the added dim dropped
--- again; batch dims broadcast.
local function matmul_shape(x, y)
  local nx, ny = #x, #y
  if nx == 0 or ny == 0 then error("matmul: both arguments need at least one dim", 0) end
  agree("matmul: shapes cannot be multiplied", x[nx], ny >= 2 and y[ny - 1] or y[1])
  if nx == 1 and ny == 1 then return {} end
  local xb, yb = {}, {}
  for i = 1, nx - 2 do xb[i] = x[i] end
  for i = 1, ny - 2 do yb[i] = y[i] end
  local out = shape.broadcast(xb, yb)
  if nx >= 2 then out[#out + 1] = x[nx - 1] end
  if ny >= 2 then out[#out + 1] = y[ny] end
  return out
end
F.matmul_shape = matmul_shape
F["aten::matmul"] = function(a)
  return shape.tensor(matmul_shape(a.self.shape, a.other.shape), dtype_of(a.self, a.other))
end

F["aten::linear"] = function(a)
  if #a.input.shape == 0 then error("linear: the input needs at least one dim", 0) end
  agree("linear: shapes cannot be multiplied", a.input.shape[#a.input.shape], a.weight.shape[#a.weight.shape])
  local out = shape.copy(a.input.shape)
  if #a.weight.shape == 1 then table.remove(out)
  else out[#out] = a.weight.shape[1] end
  return shape.tensor(out, dtype_of(a.input, a.weight))
end

-- {====================================================================================
-- Convolution and pooling

--- One setting per spatial dim (a single number repeats).
local function per_dim(v, n, default)
  if v == nil then v = default end
  if type(v) ~= "table" then
    local r = {}
    for i = 1, n do r[i] = v end
    return r
  end
  if #v == 1 and n > 1 then
    local r = {}
    for i = 1, n do r[i] = v[1] end
    return r
  end
  return v
end

--- Channels-last in, channels-last out (what torch's CPU kernels do); else row-major.
local function conv_layout(input, weight, out)
  local fmt = layout.suggest_format(input)
  if weight and fmt == "contiguous_format" then fmt = layout.suggest_format(weight) end
  if fmt ~= "contiguous_format" and (#out == 4 or #out == 5) then return layout.channels_last(out) end
  return layout.contiguous(out)
end

local function convolution(input, weight, stride, padding, dilation, transposed, output_padding, groups)
  local spatial = #weight.shape - 2
  local batched = #input.shape == spatial + 2
  local first = batched and 3 or 2
  stride = per_dim(stride, spatial, 1)
  dilation = per_dim(dilation, spatial, 1)
  output_padding = per_dim(output_padding, spatial, 0)
  local out = {}
  if batched then out[1] = input.shape[1] end
  out[#out + 1] = transposed and S.mul(weight.shape[2], groups or 1) or weight.shape[1]
  for i = 1, spatial do
    local size, k = input.shape[first + i - 1], weight.shape[2 + i]
    local reach = S.mul(dilation[i], S.sub(k, 1)) -- dilation * (kernel - 1)
    local pad
    if padding == "valid" then pad = 0
    elseif padding == "same" then pad = nil
    else pad = per_dim(padding, spatial, 0)[i] end
    if pad == nil then
      out[#out + 1] = size
    elseif transposed then
      out[#out + 1] = S.add(S.add(S.sub(S.mul(S.sub(size, 1), stride[i]), 2 * pad), reach), output_padding[i] + 1)
    else
      out[#out + 1] = S.add(S.floordiv(S.sub(S.sub(S.add(size, 2 * pad), reach), 1), stride[i]), 1)
    end
  end
  return shape.tensor(out, D.result_type(input, weight), conv_layout(input, weight, out))
end

F["aten::convolution"] = function(a)
  return convolution(a.input, a.weight, a.stride, a.padding, a.dilation, a.transposed, a.output_padding, a.groups)
end
F["aten::_convolution"] = F["aten::convolution"]
for _, name in ipairs({ "conv1d", "conv2d", "conv3d" }) do
  F["aten::" .. name] = function(a)
    return convolution(a.input, a.weight, a.stride, a.padding, a.dilation, false, 0, a.groups)
  end
end
for _, name in ipairs({ "conv_transpose1d", "conv_transpose2d", "conv_transpose3d" }) do
  F["aten::" .. name] = function(a)
    return convolution(a.input, a.weight, a.stride, a.padding, a.dilation, true, a.output_padding, a.groups)
  end
end

--- torch's pooling_output_shape: floor (or ceil) division, and in ceil mode the last window
--- must start inside the input.
local function pooled(size, k, pad, stride, dilation, ceil_mode)
  local span = S.sub(S.add(size, 2 * pad), dilation * (k - 1) + 1)
  if not ceil_mode then return S.add(S.floordiv(span, stride), 1) end
  local out = S.add(S.floordiv(S.add(span, stride - 1), stride), 1)
  if S.is_concrete(out) and S.is_concrete(size) and (out - 1) * stride >= size + pad then out = out - 1 end
  return out
end

local function pool_shape(t, spatial, kernel, stride, padding, dilation, ceil_mode)
  kernel = per_dim(kernel, spatial)
  if stride == nil or (type(stride) == "table" and #stride == 0) then stride = kernel end
  stride = per_dim(stride, spatial)
  padding = per_dim(padding, spatial, 0)
  dilation = per_dim(dilation, spatial, 1)
  local n = #t.shape
  local out = {}
  for i = 1, n - spatial do out[i] = t.shape[i] end
  for i = 1, spatial do
    out[#out + 1] = pooled(t.shape[n - spatial + i], kernel[i], padding[i], stride[i], dilation[i], ceil_mode)
  end
  return out
end

local function pool_layout(t, out)
  if layout.suggest_format(t) ~= "contiguous_format" then return layout.channels_last(out) end
  return layout.contiguous(out)
end

local function max_pool(spatial, with_indices)
  return function(a)
    local t = a.self
    local out = pool_shape(t, spatial, a.kernel_size, a.stride, a.padding, a.dilation, a.ceil_mode)
    local values = shape.tensor(out, t.dtype, pool_layout(t, out))
    if not with_indices then return values end
    return { values, shape.tensor(shape.copy(out), "int64", pool_layout(t, out)) }
  end
end
F["aten::max_pool1d"] = max_pool(1, false)
F["aten::max_pool2d"] = max_pool(2, false)
F["aten::max_pool3d"] = max_pool(3, false)
F["aten::max_pool2d_with_indices"] = max_pool(2, true)
F["aten::max_pool3d_with_indices"] = max_pool(3, true)

local function avg_pool(spatial)
  return function(a)
    local t = a.self
    local out = pool_shape(t, spatial, a.kernel_size, a.stride, a.padding, 1, a.ceil_mode)
    return shape.tensor(out, t.dtype, pool_layout(t, out))
  end
end
F["aten::avg_pool1d"] = avg_pool(1)
F["aten::avg_pool2d"] = avg_pool(2)
F["aten::avg_pool3d"] = avg_pool(3)

local function adaptive(spatial, with_indices)
  return function(a)
    local t = a.self
    local sizes = per_dim(a.output_size, spatial)
    local out = {}
    local n = #t.shape
    for i = 1, n - spatial do out[i] = t.shape[i] end
    for i = 1, spatial do out[#out + 1] = sizes[i] == graft.None and t.shape[n - spatial + i] or sizes[i] end
    local values = shape.tensor(out, t.dtype, pool_layout(t, out))
    if not with_indices then return values end
    return { values, shape.tensor(shape.copy(out), "int64", pool_layout(t, out)) }
  end
end
F["aten::adaptive_avg_pool1d"] = adaptive(1, false)
F["aten::adaptive_avg_pool2d"] = adaptive(2, false)
F["aten::_adaptive_avg_pool2d"] = adaptive(2, false)
F["aten::adaptive_avg_pool3d"] = adaptive(3, false)
F["aten::adaptive_max_pool2d"] = adaptive(2, true)

--- Upsampling: the output size given, or the input's times the scale, rounded down.
local function upsample(spatial)
  return function(a)
    local t = a.input or a.self
    local n = #t.shape
    local out = {}
    for i = 1, n - spatial do out[i] = t.shape[i] end
    local scales = a.scale_factors or
      (spatial == 1 and { a.scales } or spatial == 2 and { a.scales_h, a.scales_w } or
        { a.scales_d, a.scales_h, a.scales_w })
    for i = 1, spatial do
      local size = t.shape[n - spatial + i]
      if a.output_size then
        out[#out + 1] = a.output_size[i]
      elseif S.is_concrete(size) and type(scales[i]) == "number" then
        out[#out + 1] = math.tointeger(math.floor(size * scales[i]))
      else
        return nil -- a symbolic size times a float scale
      end
    end
    return shape.tensor(out, t.dtype, pool_layout(t, out))
  end
end
F["aten::upsample_nearest1d"] = upsample(1)
F["aten::upsample_nearest2d"] = upsample(2)
F["aten::upsample_nearest3d"] = upsample(3)
F["aten::upsample_bilinear2d"] = upsample(2)
F["aten::upsample_bicubic2d"] = upsample(2)
F["aten::upsample_linear1d"] = upsample(1)
F["aten::upsample_trilinear3d"] = upsample(3)

return F
