-- Reductions: the reduced dims dropped (or kept as 1), a new row-major result.
local D = require("meta.dtypes")
local shape = require("meta.shape")

local F = {}

--- The shape `t` reduces to over `dims` (nil or {}: all of them).
local function reduced_shape(t, dims, keepdim)
  local n = #t.shape
  local set = shape.axes(dims, n)
  local out = {}
  for i = 1, n do
    if not set[i] then out[#out + 1] = t.shape[i]
    elseif keepdim then out[#out + 1] = 1 end
  end
  return out
end
F.reduced_shape = reduced_shape

local function reduction(dtype_of)
  return function(a)
    local t = a.self
    return shape.tensor(reduced_shape(t, a.dim, a.keepdim), dtype_of(a, t))
  end
end

-- sum and prod: integers accumulate in int64 unless a dtype is asked for
local function accumulating(a, t)
  if a.dtype then return a.dtype end
  if t.dtype == "bool" or D.is_integer(t.dtype) then return "int64" end
  return t.dtype
end
local function same(a, t) return a.dtype or t.dtype end

F["aten::sum"] = reduction(accumulating)
F["aten::nansum"] = reduction(accumulating)
F["aten::prod"] = reduction(accumulating)
F["aten::mean"] = reduction(same)
F["aten::nanmean"] = reduction(same)
F["aten::amax"] = reduction(same)
F["aten::amin"] = reduction(same)
F["aten::logsumexp"] = reduction(function(_, t) return D.to_float(t.dtype) end)
F["aten::all"] = reduction(function() return "bool" end)
F["aten::any"] = reduction(function() return "bool" end)
F["aten::count_nonzero"] = reduction(function() return "int64" end)
F["aten::argmax"] = reduction(function() return "int64" end)
F["aten::argmin"] = reduction(function() return "int64" end)
F["aten::var"] = reduction(function(_, t) return D.to_real(t.dtype) end)
F["aten::std"] = reduction(function(_, t) return D.to_real(t.dtype) end)

local function values_and_indices(a)
  local t = a.self
  if a.dim == nil then return shape.tensor({}, t.dtype) end -- max(x): the largest element
  local out = reduced_shape(t, a.dim, a.keepdim)
  return { shape.tensor(out, t.dtype), shape.tensor(shape.copy(out), "int64") }
end
F["aten::max"] = function(a)
  if a.other then return require("meta.elementwise")["aten::maximum"](a) end
  return values_and_indices(a)
end
F["aten::min"] = function(a)
  if a.other then return require("meta.elementwise")["aten::minimum"](a) end
  return values_and_indices(a)
end
F["aten::median"] = values_and_indices
F["aten::mode"] = values_and_indices
F["aten::kthvalue"] = values_and_indices

local function var_mean(a)
  local t = a.self
  local out = reduced_shape(t, a.dim, a.keepdim)
  return { shape.tensor(out, D.to_real(t.dtype)), shape.tensor(shape.copy(out), t.dtype) }
end
F["aten::var_mean"] = var_mean
F["aten::std_mean"] = var_mean

-- Scans keep the shape.
local function scan(a)
  local t = a.self
  return shape.tensor(shape.copy(t.shape), accumulating(a, t))
end
F["aten::cumsum"] = scan
F["aten::cumprod"] = scan

return F
