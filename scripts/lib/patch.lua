-- patch: graphpatch's patches, at node paths, in Lua.
--
--   local patch = require("lib.patch")
--   patch.apply(g, {
--     ["linear_0.output"] = patch.add(1),          -- the first call of `linear` returns its result + 1
--     ["linear_1.output"] = patch.zero(),          -- the second returns zeros
--     ["layers.3.attn.softmax"] = { patch.mul(0.5), patch.record("attention") },
--   })
--   local peak = patch.scope(g, patches, function(g) return g:memory_peak() end)  -- undone afterwards
--
-- A path names a node through the hierarchy (g:locate): a node of the root graph, or of a
-- submodule's own graph (`linear_0.output` is the output of the call `linear_0`'s graph, so only
-- that call changes). At a node, a patch replaces the node's value for every user after it; at
-- an `output` node, the value the graph returns. Patches at one path apply in list order, each on
-- the last one's result; paths apply in sorted order.
--   add(v), mul(v)       the value plus / times v (a number)
--   zero()               zeros of the value's shape (torch.zeros_like)
--   replace(build)       build(g, value) makes the new value with graph methods and returns it
--   record(name)         the root graph returns (what it returned, (recorded values...)), the
--                        names in the output node's `recorded` metadata (root-graph nodes only)
local M = {}

function M.add(value) return { kind = "add", value = value } end
function M.mul(value) return { kind = "mul", value = value } end
function M.zero() return { kind = "zero" } end
function M.replace(build)
  assert(type(build) == "function", "patch.replace: give a function(g, value) returning the new value")
  return { kind = "replace", build = build }
end
function M.record(name)
  assert(type(name) == "string", "patch.record: give the recorded output a name")
  return { kind = "record", name = name }
end

--- The new value for `value` (a node of graph `g`) under patch `p`, made with g's methods.
local function patched(g, p, value, at_root)
  if p.kind == "add" or p.kind == "mul" then
    assert(type(p.value) == "number", ("patch.%s: the value must be a number"):format(p.kind))
    return g:call_function(p.kind == "add" and "torch.add" or "torch.mul", { value, p.value })
  elseif p.kind == "zero" then
    return g:call_function("torch.zeros_like", { value })
  elseif p.kind == "replace" then
    return p.build(g, value)
  elseif p.kind == "record" then
    assert(at_root, "patch.record: only a node of the root graph can become an output (inline its module first)")
    -- The root's output becomes (what it returned, {recorded...}); a later record adds to the list.
    local out = g:output()
    local returned = out.args[1]
    local previous = out.meta.recorded
    if previous then
      local items = {}
      for i = 1, #returned[2] do items[i] = returned[2][i] end
      items[#items + 1] = value
      out:set_arg(1, graft.tuple { returned[1], graft.tuple(items) })
      out:set_meta("recorded", previous .. "," .. p.name)
    else
      out:set_arg(1, graft.tuple { returned, graft.tuple { value } })
      out:set_meta("recorded", p.name)
    end
    return nil -- the value itself is unchanged
  end
  error("patch: unknown patch kind " .. tostring(p.kind))
end

--- Applies `list` (one patch or a list) at node `node` of graph `g`.
local function apply_at(g, node, list, at_root)
  if list.kind then list = { list } end
  local is_output = node.op == "output"
  local value = is_output and node.args[1] or node
  if is_output and getmetatable(value) ~= "graft.Node" then
    error("patch: the output at this path returns " .. tostring(value) .. ", not one value: patch its items")
  end
  for _, p in ipairs(list) do
    local anchor = is_output and node or value
    local existing = {} -- the nodes a replace builds are new: they keep reading the old value
    for n in g:nodes() do existing[n.name] = true end
    local new = is_output and g:inserting_before(anchor, function() return patched(g, p, value, at_root) end)
      or g:inserting_after(anchor, function() return patched(g, p, value, at_root) end)
    if new ~= nil then
      if is_output then
        node:set_arg(1, new)
      else
        value:replace_all_uses_with(new, function(user) return existing[user.name] == true end)
      end
      value = new
    end
  end
end

--- Applies `patches` ({[path] = patch or {patch, ...}}) to graph `g` (a pipeline pass's root graph).
function M.apply(g, patches)
  local paths = {}
  for path in pairs(patches) do paths[#paths + 1] = path end
  table.sort(paths)
  for _, path in ipairs(paths) do
    local module, name = g:locate(path)
    if module == nil then error("patch: " .. name, 2) end
    if module == "" then
      apply_at(g, g:find(name), patches[path], true)
    else
      g:submodule(module, function(sub) apply_at(sub, sub:find(name), patches[path], false) end)
    end
  end
end

--- fn(g) with `patches` applied, and its result; afterwards the graph is exactly as before.
function M.scope(g, patches, fn)
  return g:scope(function() M.apply(g, patches); return fn(g) end)
end

return M
