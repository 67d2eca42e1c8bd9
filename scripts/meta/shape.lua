-- Shapes: dims, broadcasting, -1 sizes, and the tensor description meta functions return.
local S = require("meta.symbolic")
local layout = require("meta.layout")

local M = {}

local math_type = math.type

--- A tensor description: `stride` defaults to row-major, `device` to the input's (filled in
--- by g:propagate_meta when left out).
function M.tensor(shape, dtype, stride, device)
  return { shape = shape, dtype = dtype, stride = stride or layout.contiguous(shape), device = device }
end

--- The same description with another dtype (a new, row-major tensor unless `stride` given).
function M.like(t, dtype, stride)
  return { shape = M.copy(t.shape), dtype = dtype or t.dtype, stride = stride or layout.contiguous(t.shape),
    device = t.device }
end

function M.copy(list)
  local r = {}
  for i = 1, #list do r[i] = list[i] end
  return r
end

--- The Lua index (1-based) of ATen dim `d` (0-based, negative from the end) in `n` dims.
function M.axis(d, n)
  local m = n == 0 and 1 or n
  if math_type(d) ~= "integer" or d < -m or d >= m then
    error(string.format("dim %s out of range for a tensor with %d dims", tostring(d), n), 0)
  end
  if d < 0 then d = d + m end
  return d + 1
end

--- A list of dims (or one dim, or nil/empty for all) as a set of Lua indices.
function M.axes(dims, n)
  local set = {}
  if dims == nil or (type(dims) == "table" and #dims == 0) then
    for i = 1, n do set[i] = true end
    return set
  end
  if type(dims) ~= "table" then dims = { dims } end
  for _, d in ipairs(dims) do set[M.axis(d, n)] = true end
  return set
end

function M.numel(shape) return S.prod(shape) end

--- The broadcast shape of several shapes (torch.broadcast_shapes).
function M.broadcast(...)
  local shapes = { ... }
  local first = shapes[1]
  local n = 0
  local same = true
  for _, s in ipairs(shapes) do
    if #s > n then n = #s end
    if s ~= first then same = false end
  end
  if same and first then return M.copy(first) end
  local out = {}
  for i = 1, n do
    local size = 1
    for _, s in ipairs(shapes) do
      local d = s[#s - n + i]
      if d ~= nil and d ~= 1 and d ~= size then
        if size == 1 then size = d
        elseif not S.eq(size, d) then
          error(string.format("shapes cannot be broadcast: size %s against %s at dim %d", tostring(size),
            tostring(d), i - 1), 0)
        end
      end
    end
    out[i] = size
  end
  return out
end

--- `sizes` with its one -1 replaced so that the product is `numel` (view, reshape).
function M.infer_size(sizes, numel)
  local known, unknown = 1, nil
  local out = {}
  for i, s in ipairs(sizes) do
    if s == -1 then
      if unknown then error("only one dimension can be inferred", 0) end
      unknown = i
    else
      known = S.mul(known, s)
    end
    out[i] = s
  end
  if unknown then
    if known == 0 then error("cannot infer a size with 0 elements in the others", 0) end
    out[unknown] = S.div(numel, known)
  elseif not S.eq(known, numel) then
    error(string.format("shape of %s elements is invalid for input of size %s", tostring(known), tostring(numel)), 0)
  end
  return out
end

return M
