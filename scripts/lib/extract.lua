-- extract: custom extraction for a hierarchy (graft_fx export --hierarchy): a Lua function per
-- module class builds the graph of that class's modules, where tracing could not (they are
-- opaque) or always.
--
--   local extract = require("lib.extract")
--   return extract {
--     ["bitsandbytes.nn.modules.Linear8bitLt"] = function(sub, module) ... end,
--     always = false,  -- true: replace the traced graphs of these classes too
--   }
--
-- gives a pass. Each function gets a graph handle `sub` to fill (placeholders named as the
-- forward's arguments, get_attr of the module's own tensors and settings by their own names,
-- one output) and the module as g:module(path) describes it (class, parameters, buffers,
-- settings). A class matches by its qualified name or its last part (`Linear8bitLt`).

--- Whether module `info`'s class is `class`, spelled in full or by its last part.
local function has_class(info, class)
  return info.class == class or info.class:match("([^.]+)$") == class
end

return function(builders)
  assert(type(builders) == "table", "lib.extract: give a table {class = function(sub, module) ... end}")
  local always = builders.always == true
  local classes = {}
  for class, build in pairs(builders) do
    if class ~= "always" then
      assert(type(class) == "string" and type(build) == "function",
        "lib.extract: each entry is class name = function(sub, module)")
      classes[#classes + 1] = class
    end
  end
  table.sort(classes) -- one order whatever the table's: the same graph every run
  return graft.pass {
    name = "extract",
    run = function(g)
      local built = 0
      for _, path in ipairs(g:modules()) do
        local info = g:module(path)
        if path ~= "" and (info.opaque or (always and info.has_graph)) then
          for _, class in ipairs(classes) do
            if has_class(info, class) then
              g:set_submodule_graph(path, function(sub) builders[class](sub, info) end)
              built = built + 1
              break
            end
          end
        end
      end
      print(("extract: built the graph of %d module%s"):format(built, built == 1 and "" or "s"))
    end,
  }
end
