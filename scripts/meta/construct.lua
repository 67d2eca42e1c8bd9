-- New tensors: factories (empty, zeros, full, arange, *_like) and joins (cat, stack).
local D = require("meta.dtypes")
local S = require("meta.symbolic")
local layout = require("meta.layout")
local shape = require("meta.shape")

local F = {}

local copy = shape.copy

local function factory(default_dtype)
  return function(a)
    local sizes = copy(a.size)
    local t = shape.tensor(sizes, a.dtype or default_dtype(a), layout.for_format(sizes, a.memory_format))
    t.device = a.device or "cpu"
    return t
  end
end
local function float_default() return D.default_float end
for _, name in ipairs({ "empty", "zeros", "ones", "rand", "randn", "empty_strided" }) do
  F["aten::" .. name] = factory(float_default)
end
F["aten::empty_strided"] = function(a)
  return { shape = copy(a.size), dtype = a.dtype or D.default_float, stride = copy(a.stride),
    device = a.device or "cpu" }
end
F["aten::full"] = factory(function(a)
  local v = a.fill_value
  if type(v) == "boolean" then return "bool" end
  return math.type(v) == "integer" and "int64" or D.default_float
end)
F["aten::randint"] = factory(function() return "int64" end)
F["aten::scalar_tensor"] = function(a)
  local t = shape.tensor({}, a.dtype or D.default_float)
  t.device = a.device or "cpu"
  return t
end

local function like(a)
  local t = a.self
  local out = shape.tensor(copy(t.shape), a.dtype or t.dtype,
    layout.for_format(t.shape, a.memory_format or "preserve_format", t))
  out.device = a.device or t.device
  return out
end
for _, name in ipairs({ "empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
  "randint_like" }) do
  F["aten::" .. name] = like
end

local function new_of(a)
  local sizes = copy(a.size)
  local t = shape.tensor(sizes, a.dtype or a.self.dtype)
  t.device = a.device or a.self.device
  return t
end
for _, name in ipairs({ "new_empty", "new_zeros", "new_ones", "new_full" }) do F["aten::" .. name] = new_of end

F["aten::arange"] = function(a)
  local start, stop, step = a.start, a["end"], a.step or 1
  if stop == nil then start, stop = 0, a["end"] end
  start = start or 0
  local all_int = math.type(start) == "integer" and math.type(stop) == "integer" and math.type(step) == "integer"
  local n
  if all_int then n = math.max(0, (stop - start + step - (step > 0 and 1 or -1)) // step)
  else n = math.max(0, math.ceil((stop - start) / step)) end
  local t = shape.tensor({ math.tointeger(n) }, a.dtype or (all_int and "int64" or D.default_float))
  t.device = a.device or "cpu"
  return t
end

--- Padding: `pad` holds (before, after) pairs from the last dim backwards.
F["aten::constant_pad_nd"] = function(a)
  local t = a.self
  local out = copy(t.shape)
  local n = #out
  for i = 1, #a.pad // 2 do
    local d = n - i + 1
    out[d] = S.add(S.add(out[d], a.pad[2 * i - 1]), a.pad[2 * i])
  end
  return shape.tensor(out, t.dtype, layout.for_format(out, layout.suggest_format(t)))
end

-- torch.cat skips legacy empty inputs (1-d, 0 elements) when sizing the result
local function skipped(t) return #t.shape == 1 and t.shape[1] == 0 end

F["aten::cat"] = function(a)
  local tensors = a.tensors
  local ref
  for _, t in ipairs(tensors) do
    if not skipped(t) then
      ref = t
      break
    end
  end
  local dtype
  for _, t in ipairs(tensors) do dtype = D.promote(dtype, t.dtype) end
  if ref == nil then return shape.tensor({ 0 }, dtype) end
  local k = shape.axis(a.dim or 0, #ref.shape)
  local out = copy(ref.shape)
  local total = 0
  local format
  for _, t in ipairs(tensors) do
    if not skipped(t) then
      if #t.shape ~= #ref.shape then
        error(string.format("cat: tensors must have the same number of dims: %d and %d", #ref.shape, #t.shape), 0)
      end
      total = S.add(total, t.shape[k])
      for d = 1, #out do
        local x, y = ref.shape[d], t.shape[d]
        if d ~= k and type(x) == "number" and type(y) == "number" and x ~= y then
          error(string.format("cat: sizes must match except in dim %d: %d against %d at dim %d", k - 1, x, y, d - 1), 0)
        end
      end
    end
    local f = layout.suggest_format(t) -- every input votes, the skipped ones too
    if format == nil then format = f elseif format ~= f then format = "contiguous_format" end
  end
  out[k] = total
  return shape.tensor(out, dtype, layout.for_format(out, format))
end
F["aten::concat"] = F["aten::cat"]
F["aten::concatenate"] = F["aten::cat"]

-- stack: the inputs each unsqueezed at dim, joined. torch (CPU) lays the result out in the
-- inputs' memory format (channels-last when every input suggests it, else row-major), the new
-- dim just slower than the dim it is inserted before; row-major when it stacks at the new last dim.
F["aten::stack"] = function(a)
  local unsqueeze = require("meta.views")["aten::unsqueeze"]
  local first = a.tensors[1]
  local n = #first.shape
  local dim = a.dim or 0
  if dim < 0 then dim = dim + n + 1 end
  local parts = {}
  local channels_last = n == 4
  for i, t in ipairs(a.tensors) do
    parts[i] = unsqueeze({ self = t, dim = dim })
    channels_last = channels_last and layout.suggest_format(t) == "channels_last"
  end
  local out = F["aten::cat"]({ tensors = parts, dim = dim })
  if dim == n then
    out.stride = layout.contiguous(out.shape)
    return out
  end
  local order = {} -- the input's dims, fastest first
  if channels_last then order = { 2, 4, 3, 1 } else for i = n, 1, -1 do order[#order + 1] = i end end
  local stride, next_stride = {}, 1
  local function place(d)
    stride[d] = next_stride
    next_stride = S.mul(next_stride, out.shape[d])
  end
  for _, d in ipairs(order) do
    place(d <= dim and d or d + 1)
    if d == dim + 1 then place(dim + 1) end -- the new dim, just slower than the dim it precedes
  end
  out.stride = stride
  return out
end

return F
