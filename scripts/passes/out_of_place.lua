-- out_of_place: turn in-place ATen ops (relu_, add_, hardswish_, ...) into their out-of-place
-- variants, for backends that cannot run in-place ops. Only where that cannot
-- change a result:
--   * the op has an out-of-place twin with the same arguments (the schema registry says so),
--   * the only argument it writes is its first (`self`, annotated `Tensor(a!)`),
--   * `self` is a fresh value: made by an op whose result aliases nothing (no view), or
--     taken out of such an op's tuple result by getitem — never a graph input or a parameter,
--   * nothing reads `self` after the in-place op (so nobody could see it change).
-- Every in-place op that is skipped is counted and the reason is printed.

local function aliases_nothing(producer)
  if producer.op ~= "call_function" then return false end
  if producer.target == "_operator.getitem" then
    local source = producer.args[1]
    return type(source) == "userdata" and aliases_nothing(source)
  end
  local schema = producer.schema
  if not schema then return false end
  for _, r in ipairs(schema.returns) do
    if r.type:find("(", 1, true) then return false end  -- an alias annotation: a view of an input
  end
  return true
end

--- The out-of-place twin of an in-place target, or nil.
local function twin(target)
  local ns, name, overload = target:match("^(torch%.ops%.[%w_]+)%.([%w_]+_)%.([%w_]+)$")
  if not name or name:sub(1, 2) == "__" then return nil end
  local candidate = ns .. "." .. name:sub(1, -2) .. "." .. overload
  local inplace, outplace = graft.schema(target), graft.schema(candidate)
  if not inplace or not outplace or #inplace.arguments ~= #outplace.arguments then return nil end
  for i, a in ipairs(inplace.arguments) do
    local b = outplace.arguments[i]
    if a.name ~= b.name or a.kwarg_only ~= b.kwarg_only then return nil end
    if i > 1 and a.is_mutable then return nil end
  end
  if not inplace.arguments[1].is_mutable then return nil end
  return candidate
end

--- True if some user of `value` other than `n` comes after `n`.
local function read_after(value, n, position)
  for _, user in ipairs(value.users) do
    if user ~= n and position[user] > position[n] then return true end
  end
  return false
end

return graft.pass {
  name = "out_of_place",
  run = function(g)
    local changed, skipped = 0, {}
    local position, i = {}, 0
    for m in g:nodes() do
      i = i + 1
      position[m] = i
    end
    for n in g:nodes("call_function") do
      local target = n.target
      if target:match("_%.[%w_]+$") then
        local new_target = twin(target)
        local self = n.args[1]
        local why
        if not new_target then
          why = "no out-of-place twin"
        elseif type(self) ~= "userdata" or not aliases_nothing(self) then
          why = "its input may alias another tensor"
        elseif read_after(self, n, position) then
          why = "its input is read afterwards"
        end
        if why then
          skipped[#skipped + 1] = n.name .. " (" .. why .. ")"
        else
          n.target = new_target
          changed = changed + 1
        end
      end
    end
    print(string.format("out_of_place: %d in-place ops replaced, %d kept", changed, #skipped))
    for _, s in ipairs(skipped) do print("  kept " .. s) end
  end,
}
