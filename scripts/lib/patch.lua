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
--                        names in the output node's `recorded` metadata; a value inside a
--                        submodule is handed up through each call (getitem of the call)
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

--- Adds `value` to what graph `g` returns: (what it returned, (recorded..., value)); the names
--- go to the output node's `recorded` metadata.
local function add_to_output(g, value, name)
  local out = g:output()
  local returned = out.args[1]
  local previous = out.meta.recorded
  if previous then
    local items = {}
    for i = 1, #returned[2] do items[i] = returned[2][i] end
    items[#items + 1] = value
    out:set_arg(1, graft.tuple { returned[1], graft.tuple(items) })
    out:set_meta("recorded", previous .. "," .. name)
  else
    out:set_arg(1, graft.tuple { returned, graft.tuple { value } })
    out:set_meta("recorded", name)
  end
end

--- The new value for `value` (a node of graph `g`) under patch `p`, made with g's methods;
--- `record(value, name)` takes a recorded value.
local function patched(g, p, value, record)
  if p.kind == "add" or p.kind == "mul" then
    assert(type(p.value) == "number", ("patch.%s: the value must be a number"):format(p.kind))
    return g:call_function(p.kind == "add" and "torch.add" or "torch.mul", { value, p.value })
  elseif p.kind == "zero" then
    return g:call_function("torch.zeros_like", { value })
  elseif p.kind == "replace" then
    return p.build(g, value)
  elseif p.kind == "record" then
    record(value, p.name)
    return nil -- the value itself is unchanged
  end
  error("patch: unknown patch kind " .. tostring(p.kind))
end

--- Applies `list` (one patch or a list) at node `node` of graph `g`.
local function apply_at(g, node, list, record)
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
    local make = function() return patched(g, p, value, record) end
    local new -- (not `a and b or c`: a record makes nil, which would run the patch twice)
    if is_output then new = g:inserting_before(anchor, make) else new = g:inserting_after(anchor, make) end
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

--- The graph that calls module `module` and that call's node name: the nearest enclosing module
--- with a graph (or the root) holding exactly one call_module of the rest of the path.
local function call_site(g, module)
  local function calls_in(graph, target)
    local found = {}
    for n in graph:nodes { op = "call_module" } do
      if n.target == target then found[#found + 1] = n.name end
    end
    return found
  end
  local prefix = module
  while true do
    prefix = prefix:match("^(.*)%.[^.]*$") or ""
    local rest = prefix == "" and module or module:sub(#prefix + 2)
    local found
    if prefix == "" then
      found = calls_in(g, rest)
    elseif g:module(prefix) and g:module(prefix).has_graph then
      found = g:submodule(prefix, function(sub) return calls_in(sub, rest) end)
    end
    if found and #found > 1 then
      error(("patch.record: module '%s' is called %d times; record in one of its calls"):format(module, #found), 0)
    elseif found and #found == 1 then
      return prefix, found[1]
    elseif prefix == "" then
      error(("patch.record: no call of module '%s' found"):format(module), 0)
    end
  end
end

--- Makes module `module` also return the values `items` ({node, name}) names, and its caller
--- read them from the call; the caller's own records are then `pending[caller]`.
local function thread_out(g, module, items, pending)
  g:submodule(module, function(sub)
    for _, item in ipairs(items) do add_to_output(sub, sub:find(item.node), item.name) end
  end)
  local caller, call_name = call_site(g, module)
  local function rewire(graph)
    local call = graph:find(call_name)
    local made = {}
    graph:inserting_after(call, function()
      local returned = graph:call_function("_operator.getitem", { call, 0 })
      local recorded = graph:call_function("_operator.getitem", { call, 1 })
      call:replace_all_uses_with(returned, function(user) return user ~= returned and user ~= recorded end)
      for i = 1, #items do made[i] = graph:call_function("_operator.getitem", { recorded, i - 1 }).name end
    end)
    return made
  end
  local made = caller == "" and rewire(g) or g:submodule(caller, rewire)
  pending[caller] = pending[caller] or {}
  for i, item in ipairs(items) do table.insert(pending[caller], { node = made[i], name = item.name }) end
end

--- Applies `patches` ({[path] = patch or {patch, ...}}) to graph `g` (a pipeline pass's root graph).
function M.apply(g, patches)
  local paths = {}
  for path in pairs(patches) do paths[#paths + 1] = path end
  table.sort(paths)
  local pending = {} -- module path -> values recorded in its graph, to thread out to the root
  for _, path in ipairs(paths) do
    local module, name = g:locate(path)
    if module == nil then error("patch: " .. name, 2) end
    local function record(value, record_name)
      pending[module] = pending[module] or {}
      table.insert(pending[module], { node = value.name, name = record_name })
    end
    if module == "" then
      apply_at(g, g:find(name), patches[path], record)
    else
      g:submodule(module, function(sub) apply_at(sub, sub:find(name), patches[path], record) end)
    end
  end
  -- Deepest modules first, so that each caller collects what its callees hand up.
  while true do
    local deepest, depth = nil, -1
    local modules = {}
    for module in pairs(pending) do modules[#modules + 1] = module end
    table.sort(modules)
    for _, module in ipairs(modules) do
      local d = module == "" and 0 or select(2, module:gsub("%.", "")) + 1
      if module ~= "" and d > depth then deepest, depth = module, d end
    end
    if deepest == nil then break end
    local items = pending[deepest]
    pending[deepest] = nil
    thread_out(g, deepest, items, pending)
  end
  for _, item in ipairs(pending[""] or {}) do add_to_output(g, g:find(item.node), item.name) end
end

--- fn(g) with `patches` applied, and its result; afterwards the graph is exactly as before.
function M.scope(g, patches, fn)
  return g:scope(function() M.apply(g, patches); return fn(g) end)
end

return M
