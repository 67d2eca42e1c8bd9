-- Views and shape changes: the result shares the input's storage, so its strides follow from
-- the input's (view, permute, transpose, expand, slice, select, split, ...).
local D = require("meta.dtypes")
local S = require("meta.symbolic")
local layout = require("meta.layout")
local shape = require("meta.shape")

local F = {}

local copy, axis = shape.copy, shape.axis

local function view_of(t, sizes, strides)
  return { shape = sizes, dtype = t.dtype, stride = strides, device = t.device }
end

--- `t` viewed as `sizes` (one may be -1); a copy's layout when `may_copy` and no view fits.
local function reshaped(t, sizes, may_copy)
  local out = shape.infer_size(sizes, shape.numel(t.shape))
  local strides = layout.view_strides(t.shape, t.stride, out)
  if strides then return view_of(t, out, strides) end
  if not may_copy then
    error("view size is not compatible with input tensor's size and stride; use reshape instead", 0)
  end
  return shape.tensor(out, t.dtype)
end

--- x.view(dtype): the same bytes read as another dtype; the last dim (stride 1) grows or
--- shrinks by the ratio of the element sizes, the other strides scale with it.
local function view_dtype(t, dtype)
  local old, new = D.itemsize(t.dtype), D.itemsize(dtype)
  local sizes, strides = copy(t.shape), copy(t.stride)
  if old ~= new then
    local n = #sizes
    if n == 0 then error("view(dtype): a 0-dim tensor keeps its element size", 0) end
    if strides[n] ~= 1 then error("view(dtype): the last dim must have stride 1", 0) end
    for i = 1, n - 1 do strides[i] = S.div(S.mul(strides[i], old), new) end
    sizes[n] = S.div(S.mul(sizes[n], old), new)
  end
  return { shape = sizes, dtype = dtype, stride = strides, device = t.device }
end

F["aten::view"] = function(a)
  if type(a.size) ~= "table" then return view_dtype(a.self, a.dtype) end
  return reshaped(a.self, a.size, false)
end

-- resize_ gives self a new shape, row-major when it changes
F["aten::resize_"] = function(a)
  local t = a.self
  local same = #t.shape == #a.size
  for i = 1, #a.size do same = same and S.eq(t.shape[i], a.size[i]) end
  if same then return t end
  return shape.tensor(copy(a.size), t.dtype, layout.for_format(a.size, a.memory_format))
end
F["aten::resize_as_"] = function(a) return F["aten::resize_"]({ self = a.self, size = a.the_template.shape }) end
F["aten::_unsafe_view"] = function(a) return reshaped(a.self, a.size, false) end
F["aten::reshape"] = function(a) return reshaped(a.self, a.shape, true) end
F["aten::view_as"] = function(a) return reshaped(a.self, a.other.shape, false) end
F["aten::reshape_as"] = function(a) return reshaped(a.self, a.other.shape, true) end
F["aten::_reshape_alias"] = function(a) return view_of(a.self, copy(a.size), copy(a.stride)) end
F["aten::as_strided"] = function(a) return view_of(a.self, copy(a.size), copy(a.stride)) end
F["aten::alias"] = function(a) return view_of(a.self, copy(a.self.shape), copy(a.self.stride)) end
F["aten::detach"] = F["aten::alias"]
F["aten::lift"] = F["aten::alias"]

F["aten::flatten"] = function(a)
  local n = #a.self.shape
  if n == 0 then return reshaped(a.self, { 1 }, true) end
  local first, last = axis(a.start_dim or 0, n), axis(a.end_dim or -1, n)
  if first == last then return a.self end
  local sizes = {}
  for i = 1, first - 1 do sizes[#sizes + 1] = a.self.shape[i] end
  sizes[#sizes + 1] = S.prod(a.self.shape, first, last)
  for i = last + 1, n do sizes[#sizes + 1] = a.self.shape[i] end
  return reshaped(a.self, sizes, true)
end

F["aten::unflatten"] = function(a)
  local n = #a.self.shape
  local d = axis(a.dim, n)
  local sizes = {}
  for i = 1, d - 1 do sizes[#sizes + 1] = a.self.shape[i] end
  local inner = shape.infer_size(a.sizes, a.self.shape[d])
  for _, s in ipairs(inner) do sizes[#sizes + 1] = s end
  for i = d + 1, n do sizes[#sizes + 1] = a.self.shape[i] end
  return reshaped(a.self, sizes, false)
end

F["aten::permute"] = function(a)
  local t, n = a.self, #a.self.shape
  local sizes, strides = {}, {}
  for i, d in ipairs(a.dims) do
    local k = axis(d, n)
    sizes[i], strides[i] = t.shape[k], t.stride[k]
  end
  return view_of(t, sizes, strides)
end

local function transposed(t, d0, d1)
  local sizes, strides = copy(t.shape), copy(t.stride)
  if #sizes == 0 then return view_of(t, sizes, strides) end
  local i, j = axis(d0, #sizes), axis(d1, #sizes)
  sizes[i], sizes[j] = sizes[j], sizes[i]
  strides[i], strides[j] = strides[j], strides[i]
  return view_of(t, sizes, strides)
end
F["aten::transpose"] = function(a) return transposed(a.self, a.dim0, a.dim1) end
F["aten::swapaxes"] = function(a) return transposed(a.self, a.axis0, a.axis1) end
F["aten::swapdims"] = function(a) return transposed(a.self, a.dim0, a.dim1) end
F["aten::t"] = function(a)
  if #a.self.shape < 2 then return view_of(a.self, copy(a.self.shape), copy(a.self.stride)) end
  return transposed(a.self, 0, 1)
end
F["aten::numpy_T"] = function(a)
  local dims = {}
  for i = #a.self.shape - 1, 0, -1 do dims[#dims + 1] = i end
  return F["aten::permute"]({ self = a.self, dims = dims })
end

--- torch's inferExpandGeometry.
local function expanded(t, sizes)
  local n, m = #sizes, #t.shape
  local out_sizes, out_strides = {}, {}
  for i = n, 1, -1 do
    local d = m - (n - i)
    local size = d >= 1 and t.shape[d] or 1
    local stride
    if d >= 1 then stride = t.stride[d]
    elseif i == n then stride = 0 -- a 0-dim tensor expanded: every new dim repeats it
    else stride = S.mul(out_sizes[i + 1], out_strides[i + 1]) end
    local target = sizes[i]
    if target == -1 then
      if d < 1 then error("expand: -1 is not allowed in a new leading dimension", 0) end
      target = size
    end
    if not S.eq(size, target) then
      if size ~= 1 then
        error(string.format("expand: size %s must match the existing size %s at dim %d", tostring(target),
          tostring(size), i - 1), 0)
      end
      size, stride = target, 0
    end
    out_sizes[i], out_strides[i] = size, stride
  end
  return view_of(t, out_sizes, out_strides)
end
F["aten::expand"] = function(a) return expanded(a.self, a.size) end
F["aten::expand_as"] = function(a) return expanded(a.self, a.other.shape) end

local BIG = 1 << 62

--- aten.slice: start and end clamped into the dim as torch clamps them.
local function sliced(t, d, start, stop, step)
  local sizes, strides = copy(t.shape), copy(t.stride)
  local k = axis(d or 0, #sizes)
  local size = sizes[k]
  step = step or 1
  if step <= 0 then error("slice step must be positive", 0) end
  start = start or 0
  if stop == nil or (math.type(stop) == "integer" and stop >= BIG) then stop = size end
  if S.is_concrete(size) then
    if S.is_concrete(start) and start < 0 then start = start + size end
    if S.is_concrete(stop) and stop < 0 then stop = stop + size end
    if S.is_concrete(start) then start = math.min(math.max(start, 0), size) end
    if S.is_concrete(stop) then stop = math.min(math.max(stop, start), size) end
  else
    if math.type(start) == "integer" and start < 0 then start = S.add(size, start) end
    if math.type(stop) == "integer" and stop < 0 then stop = S.add(size, stop) end
  end
  sizes[k] = S.floordiv(S.add(S.sub(stop, start), step - 1), step)
  strides[k] = S.mul(strides[k], step)
  return view_of(t, sizes, strides)
end
F.sliced = sliced
F["aten::slice"] = function(a) return sliced(a.self, a.dim, a.start, a["end"], a.step) end
F["aten::narrow"] = function(a) return sliced(a.self, a.dim, a.start, S.add(a.start, a.length), 1) end

local function selected(t, d)
  local sizes, strides = copy(t.shape), copy(t.stride)
  local k = axis(d, #sizes)
  table.remove(sizes, k)
  table.remove(strides, k)
  return view_of(t, sizes, strides)
end
F.selected = selected
F["aten::select"] = function(a) return selected(a.self, a.dim) end

local function unsqueezed(t, d)
  local n = #t.shape
  local k = axis(d, n + 1)
  local sizes, strides = copy(t.shape), copy(t.stride)
  local stride = k > n and 1 or S.mul(t.shape[k], t.stride[k])
  table.insert(sizes, k, 1)
  table.insert(strides, k, stride)
  return view_of(t, sizes, strides)
end
F.unsqueezed = unsqueezed
F["aten::unsqueeze"] = function(a) return unsqueezed(a.self, a.dim) end

F["aten::squeeze"] = function(a)
  local t, n = a.self, #a.self.shape
  local which = {}
  if a.dim == nil then
    for i = 1, n do which[i] = t.shape[i] == 1 end
  else
    for k in pairs(shape.axes(a.dim, n)) do which[k] = t.shape[k] == 1 end
  end
  local sizes, strides = {}, {}
  for i = 1, n do
    if not which[i] then
      sizes[#sizes + 1] = t.shape[i]
      strides[#strides + 1] = t.stride[i]
    end
  end
  return view_of(t, sizes, strides)
end

--- Pieces of `sizes` along dim `d`: a list of views (split, chunk, unbind's parts).
local function pieces(t, d, sizes)
  local out, start = {}, 0
  for i, s in ipairs(sizes) do
    out[i] = sliced(t, d, start, S.add(start, s), 1)
    start = S.add(start, s)
  end
  return out
end

F["aten::split"] = function(a)
  local t = a.self
  local k = axis(a.dim or 0, #t.shape)
  local size = t.shape[k]
  local step = a.split_size or a.split_sizes
  if type(step) == "table" then return pieces(t, a.dim or 0, step) end
  if not S.is_concrete(size) then error("split: the number of pieces of a symbolic size is unknown", 0) end
  local sizes = {}
  local n = size == 0 and 1 or (size + step - 1) // step
  for i = 1, n do sizes[i] = math.max(0, math.min(step, size - (i - 1) * step)) end
  return pieces(t, a.dim or 0, sizes)
end
F["aten::split_with_sizes"] = function(a)
  local t, total = a.self, 0
  local d = shape.axis(a.dim or 0, #t.shape)
  for _, s in ipairs(a.split_sizes) do total = S.add(total, s) end
  local size = t.shape[d]
  if math.type(total) == "integer" and math.type(size) == "integer" and total ~= size then
    error(string.format("split_with_sizes: the sizes add up to %d, the dim has %d", total, size), 0)
  end
  return pieces(t, a.dim or 0, a.split_sizes)
end

F["aten::chunk"] = function(a)
  local t = a.self
  local k = axis(a.dim or 0, #t.shape)
  local size = t.shape[k]
  if not S.is_concrete(size) then error("chunk: the number of pieces of a symbolic size is unknown", 0) end
  local step = (size + a.chunks - 1) // a.chunks
  return F["aten::split"]({ self = t, split_size = math.max(step, 1), dim = a.dim })
end

F["aten::unbind"] = function(a)
  local t = a.self
  local k = axis(a.dim or 0, #t.shape)
  local size = t.shape[k]
  if not S.is_concrete(size) then error("unbind: the number of pieces of a symbolic size is unknown", 0) end
  local out = {}
  for i = 1, size do out[i] = selected(t, a.dim or 0) end
  return out
end

return F
