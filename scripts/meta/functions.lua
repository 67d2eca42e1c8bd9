-- The meta functions graft ships, in one table for g:propagate_meta:
--
--   local functions = require("meta.functions")
--   local report = g:propagate_meta(functions)
--
-- Keys: an operator schema's name ("aten::add.Tensor", or "aten::add" for every overload),
-- whose function gets the call's arguments by the schema's names; the target torch.fx records
-- for a call_function ("_operator.getitem"), whose function gets them by position; a module
-- class for call_module. Add your own ops to this table (or to a copy of it).
local elementwise = require("meta.elementwise")
local shape = require("meta.shape")
local views = require("meta.views")

local functions = {}

for _, part in ipairs({ "meta.elementwise", "meta.views", "meta.reductions", "meta.linalg", "meta.nn",
  "meta.construct" }) do
  local fns = require(part)
  local keys = {}
  for k in pairs(fns) do
    if type(k) == "string" and string.find(k, "::", 1, true) then keys[#keys + 1] = k end
  end
  table.sort(keys)
  for _, k in ipairs(keys) do
    if functions[k] then error("meta function '" .. k .. "' is defined twice (" .. part .. ")") end
    functions[k] = fns[k]
  end
end

local function is_tensor(v) return type(v) == "table" and v.shape ~= nil end

-- {====================================================================================
-- Values that are not tensors: sizes, dims, dtypes (symbolic traces ask for them)

functions["aten::size"] = function(a)
  if a.dim ~= nil then return a.self.shape[shape.axis(a.dim, #a.self.shape)] end
  return shape.copy(a.self.shape)
end
functions["aten::dim"] = function(a) return #a.self.shape end
functions["aten::numel"] = function(a) return shape.numel(a.self.shape) end
functions["aten::sym_size"] = functions["aten::size"]
functions["aten::sym_numel"] = functions["aten::numel"]

-- torch.fx records builtins.getattr as `getattr`
functions["getattr"] = function(a)
  local t, name = a[1], a[2]
  if not is_tensor(t) then return nil end
  if name == "shape" then return shape.copy(t.shape) end
  if name == "dtype" then return t.dtype end
  if name == "device" then return t.device end
  if name == "ndim" then return #t.shape end
  if name == "T" then return functions["aten::numpy_T"]({ self = t }) end
  return nil
end

-- Tensor methods with no single ATen schema torch.fx's call can be bound to, by position
-- ("Tensor.<method>"): x.to(torch.float64), x.to("cpu"), x.to(other), x.to(dtype=...).
local dtypes = require("meta.dtypes")
functions["Tensor.to"] = function(a)
  local t = a[1]
  if not is_tensor(t) then return nil end
  local dtype, device, copy = a.dtype, a.device, a.copy
  local flags = 0 -- positional booleans: non_blocking, then copy
  for i = 2, a.n do
    local v = a[i]
    if is_tensor(v) then
      dtype, device = dtype or v.dtype, device or v.device
    elseif type(v) == "string" and dtypes.itemsize(v) ~= nil then
      dtype = dtype or v
    elseif type(v) == "string" and string.match(v, "^%a+$") or string.match(tostring(v), "^%a+:%d+$") then
      device = device or v
    elseif type(v) == "boolean" then
      flags = flags + 1
      if flags == 2 then copy = v end
    else
      return nil -- something torch's overloads would read otherwise
    end
  end
  return elementwise["aten::to.device"]({ self = t, dtype = dtype, device = device, copy = copy,
    memory_format = a.memory_format })
end

-- torch.split is a Python function (torch.functional.split) calling Tensor.split
functions["torch.functional.split"] = function(a)
  local t, sizes, dim = a[1], a[2] or a.split_size_or_sections, a[3] or a.dim
  if not is_tensor(t) then return nil end
  if type(sizes) == "table" then
    return views["aten::split_with_sizes"]({ self = t, split_sizes = sizes, dim = dim })
  end
  return views["aten::split"]({ self = t, split_size = sizes, dim = dim })
end

--- x[i] for a tuple or list value, and basic indexing of a tensor: integers, slices, None.
local function index_tensor(t, index)
  if type(index) ~= "table" or index.start ~= nil or index.stop ~= nil or index.step ~= nil or
      getmetatable(index) ~= nil then
    index = { index }
  end
  -- `...` stands for the dims no other index item takes (None takes none).
  local ndim, taken = #t.shape, 0
  for _, ix in ipairs(index) do
    if ix ~= graft.None and ix ~= graft.Ellipsis then taken = taken + 1 end
  end
  local dim = 0
  for _, ix in ipairs(index) do
    if ix == graft.Ellipsis then
      dim = dim + (ndim - taken)
    elseif math.type(ix) == "integer" then
      t = views.selected(t, dim)
    elseif ix == graft.None then
      t = views.unsqueezed(t, dim)
      dim = dim + 1
    elseif type(ix) == "table" and not is_tensor(ix) then
      t = views.sliced(t, dim, ix.start, ix.stop, ix.step)
      dim = dim + 1
    else
      return nil -- advanced indexing: not covered
    end
  end
  return t
end

functions["_operator.getitem"] = function(a)
  local v, i = a[1], a[2]
  if is_tensor(v) then return index_tensor(v, i) end
  if type(v) ~= "table" or math.type(i) ~= "integer" then return nil end
  local n = v.n or #v
  if i < 0 then i = i + n end
  return v[i + 1]
end

-- Python's operators on tensors and on sizes (a traced `x.size(0) * 2`).
local S = require("meta.symbolic")
local function operator(size_op, tensor_key)
  return function(a)
    local x, y = a[1], a[2]
    if is_tensor(x) or is_tensor(y) then return functions[tensor_key]({ self = x, other = y }) end
    if size_op and (math.type(x) == "integer" or type(x) == "string") and
        (math.type(y) == "integer" or type(y) == "string") then
      return size_op(x, y)
    end
    return nil
  end
end
functions["_operator.add"] = operator(S.add, "aten::add")
functions["_operator.sub"] = operator(S.sub, "aten::sub")
functions["_operator.mul"] = operator(S.mul, "aten::mul")
functions["_operator.floordiv"] = operator(S.floordiv, "aten::floor_divide")
functions["_operator.truediv"] = operator(nil, "aten::div")
functions["_operator.matmul"] = function(a) return functions["aten::matmul"]({ self = a[1], other = a[2] }) end
functions["_operator.neg"] = function(a)
  if is_tensor(a[1]) then return functions["aten::neg"]({ self = a[1] }) end
  if math.type(a[1]) == "integer" then return -a[1] end
  return nil
end

-- {====================================================================================
-- torch.nn modules whose result needs no settings (call_module, keyed by class)

local function same_as_input(a) return elementwise.pointwise(a[1].dtype, nil, a[1]) end
for _, class in ipairs({ "activation.ReLU", "activation.ReLU6", "activation.GELU", "activation.SiLU",
  "activation.Hardswish", "activation.Hardsigmoid", "activation.Sigmoid", "activation.Tanh",
  "activation.LeakyReLU", "activation.ELU", "activation.Mish" }) do
  functions["torch.nn.modules." .. class] = same_as_input
end
functions["torch.nn.modules.dropout.Dropout"] = function(a) return a[1] end
-- torch.nn.functional's Python functions (no schema of their own)
functions["torch.nn.functional.leaky_relu"] = same_as_input
functions["torch.nn.functional.dropout"] = same_as_input
for n = 1, 3 do
  functions["torch.nn.functional.adaptive_avg_pool" .. n .. "d"] = function(a)
    return functions["aten::adaptive_avg_pool" .. n .. "d"]({ self = a[1], output_size = a[2] or a.output_size })
  end
end
-- torchvision's stochastic depth is the identity outside training (it returns its input)
functions["torchvision.ops.stochastic_depth.stochastic_depth"] = function(a)
  local training = a[4]
  if training == nil then training = a.training end
  if training == false and is_tensor(a[1]) then return a[1] end
  return nil
end
functions["torch.nn.modules.linear.Identity"] = function(a) return a[1] end
functions["torch.nn.modules.linear.Linear"] = function(a, _, m)
  return functions["aten::linear"]({ input = a[1], weight = m.parameters.weight })
end
functions["torch.nn.modules.normalization.LayerNorm"] = function(a)
  return shape.tensor(shape.copy(a[1].shape), a[1].dtype)
end
functions["torch.nn.modules.batchnorm.BatchNorm2d"] = function(a)
  return functions["aten::batch_norm"]({ input = a[1] })
end
--- A module's recorded settings (its constructor's: stride, padding, ...), tuples as lists.
local function settings(m)
  local out = {}
  for k, v in pairs(m.settings or {}) do
    out[k] = type(v) == "table" and v.tuple ~= nil and v.tuple or v
  end
  return out
end

for _, n in ipairs({ 1, 2, 3 }) do
  local function conv(transposed)
    return function(a, _, m)
      local s = settings(m)
      if a[2] ~= nil or a.output_size ~= nil then return nil end -- ConvTranspose's output_size: not computed
      if m.parameters.weight == nil then return nil end
      if s.padding_mode ~= nil and s.padding_mode ~= "zeros" then return nil end -- padded before the call
      return functions["aten::convolution"]({ input = a[1], weight = m.parameters.weight, stride = s.stride,
        padding = s.padding, dilation = s.dilation, transposed = transposed, output_padding = s.output_padding,
        groups = s.groups })
    end
  end
  functions["torch.nn.modules.conv.Conv" .. n .. "d"] = conv(false)
  functions["torch.nn.modules.conv.ConvTranspose" .. n .. "d"] = conv(true)
  functions["torch.nn.modules.pooling.MaxPool" .. n .. "d"] = function(a, _, m)
    local s = settings(m)
    if s.return_indices then return nil end
    return functions["aten::max_pool" .. n .. "d"]({ self = a[1], kernel_size = s.kernel_size, stride = s.stride,
      padding = s.padding, dilation = s.dilation, ceil_mode = s.ceil_mode })
  end
  functions["torch.nn.modules.pooling.AvgPool" .. n .. "d"] = function(a, _, m)
    local s = settings(m)
    return functions["aten::avg_pool" .. n .. "d"]({ self = a[1], kernel_size = s.kernel_size, stride = s.stride,
      padding = s.padding, ceil_mode = s.ceil_mode })
  end
  functions["torch.nn.modules.pooling.AdaptiveAvgPool" .. n .. "d"] = function(a, _, m)
    return functions["aten::adaptive_avg_pool" .. n .. "d"]({ self = a[1], output_size = settings(m).output_size })
  end
end
for _, n in ipairs({ 1, 3 }) do
  functions["torch.nn.modules.batchnorm.BatchNorm" .. n .. "d"] = function(a)
    return functions["aten::batch_norm"]({ input = a[1] })
  end
end
functions["torch.nn.modules.flatten.Flatten"] = function(a, _, m)
  return functions["aten::flatten"]({ self = a[1], start_dim = m.settings.start_dim or 1,
    end_dim = m.settings.end_dim or -1 })
end

return functions
