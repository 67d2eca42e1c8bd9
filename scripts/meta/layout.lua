-- Strides: how torch lays out the tensors it allocates and the views it makes.
local S = require("meta.symbolic")

local L = {}

local mul, eq = S.mul, S.eq
local math_type = math.type

--- Row-major strides for `shape` (size-1 and size-0 dims count as 1, as torch does).
function L.contiguous(shape)
  local n = #shape
  local stride = {}
  local next_stride = 1
  for i = n, 1, -1 do
    stride[i] = next_stride
    local size = shape[i]
    if math_type(size) == "integer" and math_type(next_stride) == "integer" then
      if size > 1 then next_stride = next_stride * size end
    elseif math_type(size) ~= "integer" or size > 1 then
      next_stride = mul(next_stride, size)
    end
  end
  return stride
end

--- Channels-last strides for a 4-d (N, C, H, W) or 5-d shape.
function L.channels_last(shape)
  local order = #shape == 4 and { 2, 4, 3, 1 } or { 2, 5, 4, 3, 1 }
  local stride = {}
  local next_stride = 1
  for _, d in ipairs(order) do
    stride[d] = next_stride
    local size = shape[d]
    if math_type(size) ~= "integer" or size > 1 then next_stride = mul(next_stride, size) end
  end
  return stride
end

local function is_one(x) return x == 1 end
local function is_empty(shape)
  for _, s in ipairs(shape) do if s == 0 then return true end end
  return false
end

--- Whether (shape, stride) is row-major contiguous (size-1 dims may have any stride).
function L.is_contiguous(shape, stride)
  local expected = 1
  for i = #shape, 1, -1 do
    local size = shape[i]
    if size == 0 then return true end
    if size ~= 1 then
      local st = stride[i]
      if st ~= expected and not eq(st, expected) then
        return is_empty(shape)
      end
      if math_type(size) == "integer" and math_type(expected) == "integer" then expected = expected * size
      else expected = mul(expected, size) end
    end
  end
  return true
end

--- Whether a 4-d or 5-d tensor is channels-last contiguous.
function L.is_channels_last(shape, stride)
  if #shape ~= 4 and #shape ~= 5 then return false end
  if is_empty(shape) then return true end
  local order = #shape == 4 and { 2, 4, 3, 1 } or { 2, 5, 4, 3, 1 }
  local expected = 1
  for _, d in ipairs(order) do
    if not is_one(shape[d]) then
      if not eq(stride[d], expected) then return false end
      expected = mul(expected, shape[d])
    end
  end
  return true
end

-- Symbolic strides compare only for equality; ordering needs numbers.
local function lt(a, b)
  if math_type(a) == "integer" and math_type(b) == "integer" then return a < b end
  return tostring(a) < tostring(b)
end

local function small(size) return math_type(size) == "integer" and size < 2 end

--- Whether every element has its own address and the addresses leave no gaps.
function L.is_non_overlapping_and_dense(shape, stride)
  local n = #shape
  if n == 1 then return small(shape[1]) or stride[1] == 1 end
  local perm = {}
  for i = 1, n do perm[i] = i end
  table.sort(perm, function(a, b)
    if small(shape[a]) ~= small(shape[b]) then return small(shape[b]) end
    if small(shape[a]) then return a < b end
    if stride[a] ~= stride[b] then return lt(stride[a], stride[b]) end
    return a < b
  end)
  local require_stride = 1
  for _, i in ipairs(perm) do
    if small(shape[i]) then return true end
    if not eq(stride[i], require_stride) then return false end
    require_stride = mul(require_stride, shape[i])
  end
  return true
end

--- Whether the strides order the dims as channels-last does (torch's
--- is_channels_last_strides_2d/_3d, the test behind suggest_memory_format): C fastest, then W,
--- H (, D), N; ambiguous cases (size-1 dims with equal strides) count as row-major.
local function strides_like_channels_last(shape, stride)
  local order = #shape == 4 and { 2, 4, 3, 1 } or { 2, 5, 4, 3, 1 }
  if stride[2] == 0 then return false end
  local min = 0
  for _, d in ipairs(order) do
    local size, st = shape[d], stride[d]
    if math_type(size) ~= "integer" or math_type(st) ~= "integer" then return false end
    if size == 0 or st < min then return false end
    if d == 1 and min == stride[2] then return false end
    min = st
    if size > 1 then min = min * size end
  end
  return true
end

--- The memory format torch suggests for a tensor (suggest_memory_format).
function L.suggest_format(t)
  if (#t.shape == 4 or #t.shape == 5) and strides_like_channels_last(t.shape, t.stride) then
    return #t.shape == 4 and "channels_last" or "channels_last_3d"
  end
  return "contiguous_format"
end

--- Strides for a new tensor of `shape` in `format` ("contiguous_format", "channels_last";
--- "preserve_format" follows `like` as empty_like does).
function L.for_format(shape, format, like)
  if format == "channels_last" or format == "channels_last_3d" then return L.channels_last(shape) end
  if format == "preserve_format" and like then
    if L.is_non_overlapping_and_dense(like.shape, like.stride) then
      local copy = {}
      for i, s in ipairs(like.stride) do copy[i] = s end
      return copy
    end
    if L.suggest_format(like) ~= "contiguous_format" then return L.channels_last(shape) end
    return L.dense_like({ like }, shape)
  end
  return L.contiguous(shape)
end

-- {====================================================================================
-- TensorIterator: the layout of an elementwise op's result

-- The operand's strides seen in the output's shape: leading dims added with stride 0, and
-- broadcast dims (size 1 here, larger in the output) stride 0 too.
local function broadcast_strides(t, shape)
  local n, m = #shape, #t.shape
  local offset = n - m
  local s = {}
  for i = 1, offset do s[i] = 0 end
  for i = 1, m do
    if t.shape[i] == 1 and shape[offset + i] ~= 1 then s[offset + i] = 0 else s[offset + i] = t.stride[i] end
  end
  return s
end

--- Strides of the result of an elementwise op over the tensors `inputs` (meta tables), of
--- broadcast shape `shape`, as TensorIterator allocates it: inputs of the result's shape that
--- share a layout give it theirs; otherwise the dims are ordered by the inputs' strides (the
--- first input that tells two dims apart decides) and the result is dense in that order.
function L.dense_like(inputs, shape)
  local n = #shape
  local same_shape = #inputs > 0
  for _, t in ipairs(inputs) do
    local s = t.shape
    if #s ~= n then same_shape = false
    elseif s ~= shape then
      for i = 1, n do
        if s[i] ~= shape[i] and not eq(s[i], shape[i]) then same_shape = false end
      end
    end
  end
  if same_shape then
    local function all(test)
      for _, t in ipairs(inputs) do
        if not test(t.shape, t.stride) then return false end
      end
      return true
    end
    if all(L.is_contiguous) then return L.contiguous(shape) end
    if all(L.is_channels_last) then return L.channels_last(shape) end
    if all(L.is_non_overlapping_and_dense) then
      local first = inputs[#inputs].stride
      local all_equal = true
      for _, t in ipairs(inputs) do
        for i = 1, n do
          if not eq(t.stride[i], first[i]) then all_equal = false end
        end
      end
      if all_equal then
        local copy = {}
        for i = 1, n do copy[i] = first[i] end
        return copy
      end
    end
  end
  if n <= 1 then return L.contiguous(shape) end
  -- Inputs of the result's shape with row-major strides (and 0-dim scalars) keep the row-major
  -- order: the dim ordering below would find nothing to swap.
  local canonical = L.contiguous(shape)
  local row_major = true
  for _, t in ipairs(inputs) do
    if #t.shape > 0 then
      for i = 1, n do
        if t.shape[i] ~= shape[i] or t.stride[i] ~= canonical[i] then
          row_major = false
          break
        end
      end
    end
    if not row_major then break end
  end
  if row_major then return canonical end
  local strides = {}
  for k, t in ipairs(inputs) do strides[k] = broadcast_strides(t, shape) end
  -- 1 if dim a should come after dim b (be slower-moving), -1 before, 0 undecided
  local function should_swap(a, b)
    for _, s in ipairs(strides) do
      local sa, sb = s[a], s[b]
      if sa ~= 0 and sb ~= 0 then
        if not eq(sa, sb) then return lt(sa, sb) and -1 or 1 end
        if math_type(shape[a]) == "integer" and math_type(shape[b]) == "integer" and shape[a] > shape[b] then
          return 1
        end
      end
    end
    return 0
  end
  local perm = {} -- perm[1] is the fastest-moving dim
  for i = 1, n do perm[i] = n - i + 1 end
  for i = 2, n do
    local d1 = i
    for d0 = i - 1, 1, -1 do
      local c = should_swap(perm[d0], perm[d1])
      if c > 0 then
        perm[d0], perm[d1] = perm[d1], perm[d0]
        d1 = d0
      elseif c < 0 then
        break
      end
    end
  end
  local result = {}
  local next_stride = 1
  for j = 1, n do
    result[perm[j]] = next_stride
    next_stride = mul(next_stride, shape[perm[j]])
  end
  return result
end

-- {====================================================================================
-- Views

-- view_numel < tensor_numel, for sizes that are both products of the same symbols
local function less(a, b)
  if math_type(a) == "integer" and math_type(b) == "integer" then return a < b end
  return not eq(a, b)
end

--- The strides a view of (shape, stride) as `new_shape` has, or nil when no view can express
--- it (reshape then copies). torch's computeStride.
function L.view_strides(shape, stride, new_shape)
  local n = #shape
  local new_stride = {}
  if n == 0 then
    for i = 1, #new_shape do new_stride[i] = 1 end
    return new_stride
  end
  if is_empty(shape) then
    local same = #shape == #new_shape
    for i = 1, #shape do same = same and eq(shape[i], new_shape[i]) end
    if same then return { table.unpack(stride) } end
    return L.contiguous(new_shape)
  end
  -- row-major in (exactly: size-1 dims may carry other strides), row-major out
  local canonical = L.contiguous(shape)
  local exact = true
  for i = 1, n do
    if stride[i] ~= canonical[i] then
      exact = false
      break
    end
  end
  if exact then return L.contiguous(new_shape) end
  local view_d = #new_shape
  local chunk_base_stride = stride[n]
  local tensor_numel = 1
  local view_numel = 1
  for tensor_d = n, 1, -1 do
    tensor_numel = mul(tensor_numel, shape[tensor_d])
    if tensor_d == 1 or
        (shape[tensor_d - 1] ~= 1 and not eq(stride[tensor_d - 1], mul(tensor_numel, chunk_base_stride))) then
      while view_d >= 1 and (less(view_numel, tensor_numel) or new_shape[view_d] == 1) do
        new_stride[view_d] = mul(view_numel, chunk_base_stride)
        view_numel = mul(view_numel, new_shape[view_d])
        view_d = view_d - 1
      end
      if not eq(view_numel, tensor_numel) then return nil end
      if tensor_d > 1 then
        chunk_base_stride = stride[tensor_d - 1]
        tensor_numel = 1
        view_numel = 1
      end
    end
  end
  if view_d ~= 0 then return nil end
  return new_stride
end

return L
