-- dtypes and torch's type promotion (torch.result_type): categories bool < integer < floating
-- < complex; within the operands, tensors with dims outrank zero-dim tensors, which outrank
-- Python numbers; a Python float counts as the default dtype (float32).
local D = {}

D.default_float = "float32"

local INTEGER = { uint8 = 1, int8 = 2, int16 = 3, int32 = 4, int64 = 5 }
local FLOATING = { float16 = 1, bfloat16 = 1, float32 = 2, float64 = 3 }
local COMPLEX = { complex32 = 1, complex64 = 2, complex128 = 3 }
local SIZE = {
  bool = 1, uint8 = 1, int8 = 1, int16 = 2, int32 = 4, int64 = 8, float16 = 2, bfloat16 = 2,
  float32 = 4, float64 = 8, complex32 = 4, complex64 = 8, complex128 = 16,
}

function D.is_integer(t) return INTEGER[t] ~= nil end -- bool is not an integer type here
function D.is_floating(t) return FLOATING[t] ~= nil end
function D.is_complex(t) return COMPLEX[t] ~= nil end
function D.itemsize(t) return SIZE[t] end

local function category(t)
  if t == "bool" then return 0 end
  if INTEGER[t] then return 1 end
  if FLOATING[t] then return 2 end
  if COMPLEX[t] then return 3 end
  error("unknown dtype '" .. tostring(t) .. "'", 0)
end

local COMPLEX_OF = { float16 = "complex32", bfloat16 = "complex64", float32 = "complex64", float64 = "complex128" }

--- torch.promote_types(a, b) (nil stands for no type yet).
function D.promote(a, b)
  if a == nil then return b end
  if b == nil or a == b then return a end
  local ca, cb = category(a), category(b)
  if ca ~= cb then
    local hi, lo = a, b
    if cb > ca then hi, lo = b, a end
    if category(hi) == 3 and category(lo) == 2 then
      -- complex with a wider float: the complex type that holds both
      local need = FLOATING[lo] == 3 and 3 or 2
      return COMPLEX[hi] >= need and hi or (need == 3 and "complex128" or "complex64")
    end
    return hi
  end
  if ca == 1 then
    if a == "uint8" or b == "uint8" then -- uint8 with a signed type needs a wider signed one
      local other = a == "uint8" and b or a
      return other == "int8" and "int16" or other
    end
    return INTEGER[a] > INTEGER[b] and a or b
  end
  if ca == 2 then
    if FLOATING[a] == FLOATING[b] then return "float32" end -- float16 with bfloat16
    return FLOATING[a] > FLOATING[b] and a or b
  end
  return COMPLEX[a] > COMPLEX[b] and a or b
end

-- The higher category wins, keeping its own type; within one category the types promote.
local function combine(higher, lower)
  if higher == nil then return lower end
  if lower == nil then return higher end
  local ch, cl = category(higher), category(lower)
  if ch == 3 then return higher end
  if cl == 3 then return ch == 2 and COMPLEX_OF[higher] or lower end
  if ch == 2 then return higher end
  if higher == "bool" or cl == 2 then return D.promote(higher, lower) end
  return higher
end

--- The dtype torch computes in for these operands: tensor meta tables ({shape, dtype}),
--- Lua numbers and booleans (Python scalars); nil entries are skipped.
function D.result_type(...)
  local dim, zero, wrapped
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    local tv = type(v)
    if tv == "table" and v.dtype then
      if #v.shape == 0 then zero = D.promote(zero, v.dtype) else dim = D.promote(dim, v.dtype) end
    elseif tv == "number" then
      wrapped = D.promote(wrapped, math.type(v) == "integer" and "int64" or D.default_float)
    elseif tv == "boolean" then
      wrapped = D.promote(wrapped, "bool")
    end
  end
  return combine(dim, combine(zero, wrapped))
end

--- Integers and bools become the default float (true division, sqrt, exp, sigmoid, ...).
function D.to_float(t)
  if t == "bool" or INTEGER[t] then return D.default_float end
  return t
end

--- The real type of a complex one (abs, angle); others unchanged.
function D.to_real(t)
  if t == "complex32" then return "float16" end
  if t == "complex64" then return "float32" end
  if t == "complex128" then return "float64" end
  return t
end

return D
