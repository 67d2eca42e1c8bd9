-- Reproduces the "Utilizing Local Information" example of the torch.fx guide "Writing Graph
-- Transformations on ATen IR": every Python scalar passed where the operator's schema expects a
-- Tensor becomes a tensor.
--
--     def args_map(target, fn, args, kwargs):
--         assert isinstance(args, tuple)
--         assert isinstance(kwargs, dict)
--         args = list(args)
--         kwargs = kwargs.copy()
--
--         # Update the argument based on the function passed
--         def update(key, args, schema):
--             args[key] = fn(args[key], schema)
--
--         # Update each argument in the schema
--         for i, schema in enumerate(target._schema.arguments):
--             if schema.name in kwargs:
--                 update(schema.name, kwargs, schema)
--             elif not schema.kwarg_only and i < len(args):
--                 update(i, args, schema)
--         return tuple(args), kwargs
--
--     class ScalarToTensorPass(torch.fx.Transformer):
--         def call_function(self, target, args, kwargs):
--             def try_coerce(value, arg):
--                 return (
--                     torch.tensor(value)
--                     if isinstance(value, (float, int, bool))
--                     and type(arg.type) == torch.TensorType
--                     else value
--                 )
--
--             args, kwargs = args_map(target, try_coerce, args, kwargs)
--             return super().call_function(target, args, kwargs)
--
-- Differences, all forced:
--  * The guide makes the tensor while transforming (FX then stores it on the module as a
--    `_tensor_constantN` attribute read by a get_attr node). A script cannot make tensors, so
--    each scalar becomes a node `torch.tensor(value)` computing the same tensor at run time.
--  * Targets without an operator schema (`_operator.getitem`, ...) are copied unchanged: the
--    guide's `target._schema` raises AttributeError on them, i.e. on any real ATen graph.
--  * `type(arg.type) == torch.TensorType` is `arg.is_tensor` (`Tensor`, `Tensor(a!)`, not
--    `Tensor?` or `Tensor[]`); the guide's `breakpoint()` is left out.
--
-- Run:  graft run examples/lua/scalar_to_tensor.lua examples/graphs/vit_b_16.aten.json -o out.json
--       (on torch 2.14's ATen graphs, this one included, it converts nothing, as the guide's
--       pass: their scalars go to Scalar-typed arguments, e.g. ViT-B/16's attention scaling
--       `mul.Scalar(x, 0.3535...)`, which stay scalars. A model written `x * 2` or `x / 7`
--       traces to `mul.Tensor(x, 2)` / `div.Tensor(x, 7)`, whose scalars it converts.)

-- Lua numbers are Python ints (integers) and floats; booleans are bools.
local function is_scalar(value)
  return math.type(value) ~= nil or type(value) == "boolean"
end

-- args: 1-based; kwargs: a graft.dict (iterates in order, new keys append).
local function args_map(target, fn, args, kwargs)
  local schema = graft.schema(target)
  local new_args, new_kwargs = {}, graft.dict()
  for i = 1, #args do new_args[i] = args[i] end
  for k, v in pairs(kwargs) do new_kwargs[k] = v end
  if schema == nil then return new_args, new_kwargs end

  for i, arg in ipairs(schema.arguments) do
    if new_kwargs[arg.name] ~= nil then
      new_kwargs[arg.name] = fn(new_kwargs[arg.name], arg)
    elseif not arg.kwarg_only and i <= #new_args then  -- Python's i < len(args), 0-based
      new_args[i] = fn(new_args[i], arg)
    end
  end
  return new_args, new_kwargs
end

return graft.transformer{
  name = "ScalarToTensorPass",
  call_function = function(g, target, args, kwargs, node)
    local function try_coerce(value, arg)
      if is_scalar(value) and arg.is_tensor then
        print(("%s: %s = %s -> torch.tensor(%s)"):format(node.name, arg.name, tostring(value), tostring(value)))
        return g:call_function("torch.tensor", { value })
      end
      return value
    end

    local new_args, new_kwargs = args_map(target, try_coerce, args, kwargs)
    return g:call_function(target, new_args, new_kwargs)
  end,
}
