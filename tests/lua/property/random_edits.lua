-- Random edits through the graph API for the save round-trip property test
-- (tests/cpp/lua_property_test.cpp): each edit either raises or leaves a graph that saves and
-- loads back unchanged. Values come from a pool that includes what a graph file cannot hold
-- (bytes that are not UTF-8, negative sizes), which the API must refuse at the call.
local strings = {"", "x", "relu", "a b", "\0nul", "caf\u{e9}", "\u{1f600}", "\xff\xfe", "\xed\xa0\x80",
                 "\xc0\xaf", "quote\"back\\slash", "new\nline", "tab\t", string.rep("long", 40)}
local numbers = {0, 1, -1, math.maxinteger, math.mininteger, 0.5, -0.0, 1e308, 1 / 0, -1 / 0, 0 / 0, 2 ^ 53}

local function pick(list) return list[math.random(#list)] end

local function value(g, depth)
  local kind = math.random(depth > 2 and 6 or 10)
  if kind == 1 then return pick(strings)
  elseif kind == 2 then return pick(numbers)
  elseif kind == 3 then return math.random(2) == 1
  elseif kind == 4 then return graft.None
  elseif kind == 5 then return pick(g:node_list())
  elseif kind == 6 then return pick({graft.dtype("float32"), graft.device("cuda:0"), graft.layout("strided"),
                                     graft.memory_format("channels_last")})
  elseif kind == 7 then return graft.list{value(g, depth + 1), value(g, depth + 1)}
  elseif kind == 8 then return graft.tuple{value(g, depth + 1)}
  elseif kind == 9 then return graft.dict{{pick(strings), value(g, depth + 1)}, {pick(numbers), value(g, depth + 1)}}
  else return graft.slice(pick(numbers), graft.None, value(g, depth + 1)) end
end

local function tensor_meta()
  local shape = {}
  for i = 1, math.random(0, 3) do shape[i] = math.random(3) == 1 and pick(strings) or math.random(-2, 5) end
  return {shape = shape, dtype = pick({"float32", "int64", "\xff"}), device = pick({"cpu", "meta"})}
end

local edits = {
  function(g)  -- a new node before the output
    return g:inserting_before(g:output(), function()
      return g:call_function(pick({"torch.relu", "torch.add", pick(strings)}), {value(g, 0), value(g, 0)},
                             {[pick({"alpha", "dim", pick(strings)})] = value(g, 0)},
                             math.random(2) == 1 and pick(strings) or nil)
    end)
  end,
  function(g) pick(g:node_list{op = "call_function"}).args = {value(g, 0)} end,
  function(g) pick(g:node_list{op = "call_function"}):set_kwarg(pick({"k", pick(strings)}), value(g, 0)) end,
  function(g) pick(g:node_list{op = "call_function"}).target = pick(strings) end,
  function(g) pick(g:node_list()).name = pick(strings) .. math.random(100) end,
  function(g) pick(g:node_list()):set_meta(pick({"note", pick(strings)}), value(g, 1)) end,
  function(g) pick(g:node_list()):set_meta("tensor_meta", tensor_meta()) end,
  function(g) pick(g:node_list{op = "call_function"}):erase() end,
}

return graft.pass{name = "random_edits", run = function(g)
  for _ = 1, 12 do
    -- Edits that place a node before one it uses are refused by lint at the end; the
    -- property is about what a save does, so most edits stay in order.
    pcall(pick(edits), g)
  end
end}
