// g:propagate_meta: how a node finds its function and what it is given, in-place and out=
// calls, non-tensor values, options, and errors that name the node and leave the graph as it was.
#include <string>

#include "graft/lua/sandbox.hpp"
#include "lua_test_support.hpp"

namespace graft {
namespace {

using test::graph_doc;
using test::parse;
using test::run_on;

lua::SandboxOptions with_shipped_scripts() {
  lua::SandboxOptions o;
  o.roots.emplace_back(GRAFT_SOURCE_SCRIPTS);
  return o;
}

std::string tensor(const std::string& shape, const std::string& stride, const std::string& dtype = "float32") {
  return R"({"tensor_meta":{"shape":)" + shape + R"(,"dtype":")" + dtype + R"(","stride":)" + stride +
      R"(,"device":"cpu"}})";
}

std::string node(const std::string& name, const std::string& op, const std::string& target, const std::string& args,
                 const std::string& meta = "{}", const std::string& kwargs = "{}") {
  return R"({"name":")" + name + R"(","op":")" + op + R"(","target":")" + target + R"(","args":)" + args +
      R"(,"kwargs":)" + kwargs + R"(,"meta":)" + meta + "}";
}

// x [2, 3] float32, y [3] int64 -> add(x, y, alpha=2) -> relu_ -> t -> out= add -> squeeze_ ...
GraphModule sample() {
  return parse(
      graph_doc(node("x", "placeholder", "x", "[]", tensor("[2,3]", "[3,1]")) + ",\n" +
                node("y", "placeholder", "y", "[]", tensor("[3]", "[1]", "int64")) + ",\n" +
                node("add", "call_function", "torch.ops.aten.add.Tensor", R"([{"node":"x"},{"node":"y"}])", "{}",
                     R"({"alpha":2})") +
                ",\n" + node("relu_", "call_function", "torch.ops.aten.relu_.default", R"([{"node":"add"}])") + ",\n" +
                node("t", "call_function", "torch.ops.aten.t.default", R"([{"node":"relu_"}])") + ",\n" +
                node("buf", "call_function", "torch.ops.aten.empty.memory_format", R"([[1]])") + ",\n" +
                node("into", "call_function", "torch.ops.aten.add.out", R"([{"node":"t"},1.5])", "{}",
                     R"({"out":{"node":"buf"}})") +
                ",\n" + node("sq", "call_function", "torch.ops.aten.unsqueeze_.default", R"([{"node":"into"},0])") +
                ",\n" + node("n", "call_method", "size", R"([{"node":"x"},1])") + ",\n" +
                node("v", "call_function", "torch.ops.aten.view.default", R"([{"node":"sq"},[-1,{"node":"n"}]])") +
                ",\n" + node("output", "output", "output", R"([{"node":"v"}])")));
}

const char* kExpected = R"lua(
  local function same(a, b) return table.concat(a, ",") == table.concat(b, ",") end
  local function check(g, name, shape, stride, dtype)
    local tm = g:find(name).meta.tensor_meta
    assert(tm, name .. ": no meta")
    assert(same(tm.shape, shape), name .. ": shape " .. table.concat(tm.shape, ","))
    assert(same(tm.stride, stride), name .. ": stride " .. table.concat(tm.stride, ","))
    assert(tm.dtype == dtype, name .. ": dtype " .. tm.dtype)
  end
  local function expected(g)
    check(g, "add", {2, 3}, {3, 1}, "float32")    -- broadcast, int64 promoted to float32
    check(g, "relu_", {2, 3}, {3, 1}, "float32")  -- in place: its input's
    check(g, "t", {3, 2}, {1, 3}, "float32")      -- a view: strides swapped
    check(g, "into", {3, 2}, {2, 1}, "float32")   -- out= resized to the result, row-major
    check(g, "sq", {1, 3, 2}, {6, 2, 1}, "float32")  -- unsqueeze_ reshapes its input
    check(g, "v", {2, 3}, {3, 1}, "float32")      -- view(-1, x.size(1)): size() passed on as 3
    local out = g:find("output").meta.tensor_meta
    assert(same(out.shape, {2, 3}))
  end
)lua";

TEST_CASE("lua meta: the shipped functions, in-place and out= calls, sizes passed on as values") {
  GraphModule gm = sample();
  const std::string script = std::string(kExpected) + R"lua(
    local functions = require("meta.functions")
    return function(g)
      local r = g:propagate_meta(functions)
      assert(r.computed == 9 and r.kept == 2 and r.unknown == 0, r.computed .. " " .. r.kept .. " " .. r.unknown)
      for target in pairs(r.missing) do error("no function for " .. target) end
      assert(r.mismatches == nil)
      expected(g)
      local again = g:propagate_meta(functions, { check = true })
      assert(#again.mismatches == 0)
    end
  )lua";
  lua::PipelineReport r = run_on(script, gm, with_shipped_scripts());
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
}

TEST_CASE("lua meta: schema names with and without overload, targets by position, what a function sees") {
  GraphModule gm = sample();
  lua::PipelineReport r = run_on(R"lua(
    local seen = {}
    local functions = {
      ["aten::add"] = function(a, name)  -- every overload of add
        seen[#seen + 1] = name
        assert(a.self.shape[1] == 2 and a.other.dtype == "int64" and a.alpha == 2, "bound by name")
        return { shape = { 2, 3 }, dtype = "float64" }
      end,
      ["aten::add.out"] = function(a, name)  -- the overload wins over the packet
        seen[#seen + 1] = name
        assert(a.other == 1.5 and a.out.shape[1] == 1)
        return { shape = { 3, 2 }, dtype = "float64" }
      end,
      ["torch.ops.aten.t.default"] = function(a, target)  -- a recorded target: by position
        seen[#seen + 1] = target
        assert(a[1].dtype == "float64" and a.n == 1)
        return { shape = { 3, 2 }, dtype = "float64", stride = { 1, 3 } }
      end,
      ["aten::empty"] = function(a) return { shape = a.size, dtype = "float32" } end,
    }
    return function(g)
      local r = g:propagate_meta(functions)
      assert(table.concat(seen, " ") == "aten::add.Tensor torch.ops.aten.t.default aten::add.out", table.concat(seen, " "))
      assert(r.computed == 5 and r.kept == 2 and r.unknown == 4, r.computed .. " " .. r.unknown)
      assert(r.missing["Tensor.size"] == 1 and r.missing["torch.ops.aten.view.default"] == 1)
      assert(r.missing["torch.ops.aten.unsqueeze_.default"] == 1)
      local tm = g:find("add").meta.tensor_meta
      assert(tm.device == "cpu" and tm.stride[1] == 3 and tm.stride[2] == 1)  -- completed
      tm = g:find("into").meta.tensor_meta
      assert(tm.dtype == "float32" and tm.shape[1] == 3 and tm.stride[1] == 2)  -- out's dtype, resized
    end
  )lua",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
}

TEST_CASE("lua meta: only_missing keeps recorded meta, strict names a call with no function") {
  GraphModule gm = sample();
  lua::PipelineReport r = run_on(R"lua(
    local calls = 0
    local functions = {
      ["aten::add"] = function() calls = calls + 1; return { shape = { 7 }, dtype = "int8" } end,
      ["aten::t"] = function() return { shape = { 3, 2 }, dtype = "float32" } end,
      ["aten::empty"] = function(a) return { shape = a.size, dtype = "float32" } end,
    }
    return function(g)
      g:find("add"):set_meta("tensor_meta", { shape = { 2, 3 }, dtype = "float32", stride = { 3, 1 } })
      g:propagate_meta(functions, { only_missing = true })
      assert(calls == 1 and g:find("add").meta.tensor_meta.shape[1] == 2, "add kept its meta")
      assert(g:find("into").meta.tensor_meta.shape[1] == 7, "add.out computed")
      local ok, err = pcall(g.propagate_meta, g, { ["aten::add"] = functions["aten::add"] }, { strict = true })
      assert(not ok and err:find("node 't': no meta function for torch.ops.aten.t.default", 1, true), err)
      ok, err = pcall(g.propagate_meta, g, functions, { strictly = true })
      assert(not ok and err:find("strictly", 1, true), err)
    end
  )lua",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
}

TEST_CASE("lua meta: errors name the node and leave the graph as it was") {
  GraphModule gm = sample();
  lua::PipelineReport r = run_on(R"lua(
    local function attempt(g, functions)
      local before = g:find("add").meta.tensor_meta
      local ok, err = pcall(g.propagate_meta, g, functions)
      assert(not ok)
      assert(g:find("add").meta.tensor_meta == nil and before == nil, "nothing written")
      return err
    end
    return function(g)
      local good = { shape = { 2, 3 }, dtype = "float32" }
      local err = attempt(g, { ["aten::add"] = function() return good end,
                               ["aten::t"] = function(a) return a.self.nothing.shape end })
      assert(err:find("g:propagate_meta: node 't' (aten::t): ", 1, true) and err:find("nothing"), err)
      err = attempt(g, { ["aten::add"] = function() return { shape = { 2 }, dtype = 5 } end })
      assert(err:find("node 'add' (torch.ops.aten.add.Tensor): the meta function returned a bad value: " ..
                      "tensor_meta.dtype: expected a name such as 'float32'", 1, true), err)
      err = attempt(g, { ["aten::add"] = function() return { shape = { 2 }, dtype = "float32", stride = { 1, 1 } } end })
      assert(err:find("2 strides for 1 dims", 1, true), err)
      err = attempt(g, { ["aten::add"] = 42 })
      assert(err:find("functions['aten::add'] is a number, expected a function", 1, true), err)
      err = attempt(g, { ["aten::add"] = function() g:find("x"):set_meta("custom", 1) end })
      assert(err:find("read-only", 1, true), err)
      -- the graph is writable again afterwards
      g:find("x"):set_meta("custom", 1)
    end
  )lua",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
}

TEST_CASE("lua meta: values that are not tensors, raw lookups, self-holding results, kept output meta") {
  GraphModule gm = parse(graph_doc(
      node("x", "placeholder", "x", "[]", tensor("[2,3]", "[3,1]")) + ",\n" +
      node("s", "call_method", "size", R"([{"node":"x"}])") + ",\n" +
      node("v", "call_method", "view", R"([{"node":"x"},{"node":"s"}])") + ",\n" +
      node("w", "call_method", "view", R"([{"node":"x"},3,2])") + ",\n" +
      node("r", "call_function", "torch.ops.aten.resize_.default", R"([{"node":"w"},[6]])") + ",\n" +
      node("output", "output", "output", R"([[{"node":"v"},{"node":"r"}]])", tensor("[7]", "[1]", "float16"))));
  const std::string script = R"lua(
    local functions = require("meta.functions")
    return function(g)
      -- x.size() is a list of sizes: view reads it; x.view(3, 2) binds its varargs as [3, 2]
      local r = g:propagate_meta(functions, { only_missing = true })
      assert(r.unknown == 0, r.unknown)
      local v, w, res = g:find("v").meta.tensor_meta, g:find("w").meta.tensor_meta, g:find("r").meta.tensor_meta
      assert(v.shape[1] == 2 and v.shape[2] == 3 and w.shape[1] == 3 and w.shape[2] == 2)
      assert(#res.shape == 1 and res.shape[1] == 6, "resize_ has a function of its own")
      assert(g:find("s").meta.tensor_meta == nil)  -- a value, not a tensor: not written
      assert(g:find("output").meta.tensor_meta.dtype == "float16", "only_missing keeps the output's")
      -- lookups are raw: a metatable's __index is not asked
      local inherited = setmetatable({}, { __index = functions })
      r = g:propagate_meta(inherited, { check = true })
      assert(r.missing["Tensor.view"] == 2, "no function found through __index")
      -- a result that holds itself is an error naming the node, not a hang
      local loop = {}
      for i = 1, 4 do loop[i] = loop end
      local ok, err = pcall(g.propagate_meta, g, { ["aten::size"] = function() return loop end })
      assert(not ok and err:find("node 's'", 1, true) and err:find("more than 4096 tables", 1, true), err)
    end
  )lua";
  lua::PipelineReport r = run_on(script, gm, with_shipped_scripts());
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
}

TEST_CASE("lua meta: a budget overrun inside a meta function stays a budget overrun") {
  GraphModule gm = sample();
  lua::SandboxOptions o;
  o.limits.instructions = 200000;
  lua::PipelineReport r = run_on(R"lua(
    return function(g)
      g:propagate_meta({ ["aten::add"] = function() while true do end end })
    end
  )lua",
                                 gm, o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error->to_string().find("instruction budget exceeded") != std::string::npos);
}

TEST_CASE("lua meta: symbolic sizes in canonical form") {
  GraphModule gm = sample();
  lua::PipelineReport r = run_on(R"lua(
    local S = require("meta.symbolic")
    return function()
      assert(S.mul("s0", 768) == "768*s0")
      assert(S.mul(768, "s0") == "768*s0")
      assert(S.add("s1", "s0") == "s0 + s1")
      assert(S.sub(S.add("s0", 3), "s0") == 3)
      assert(S.mul("s0", "s0") == "s0*s0")
      assert(S.div("768*s0", 768) == "s0")
      assert(S.div("768*s0*s1", "s0") == "768*s1")
      assert(S.floordiv("2*s0 + 4", 2) == "s0 + 2")
      -- floor division: whole multiples come out, the rest is one opaque symbol
      assert(S.floordiv("s0", 2) == "(s0//2)")
      assert(S.floordiv(S.sub("s0", 1), 2) == "((s0 + 1)//2) - 1", S.floordiv(S.sub("s0", 1), 2))
      assert(S.add(S.floordiv(S.sub("s0", 2), 2), 1) == S.floordiv("s0", 2))  -- one spelling each
      assert(S.floordiv("2*s0 + 1", 2) == "s0")
      assert(S.floordiv("3*s0 + 7", 2) == "((3*s0 + 1)//2) + 3", S.floordiv("3*s0 + 7", 2))
      assert(S.evaluate(S.add(S.floordiv(S.sub("s0", 1), 2), 1), { s0 = 8 }) == 4)
      assert(S.evaluate("(s0//2) + 1", { s0 = 9 }) == 5)
      assert(S.evaluate("2*s0 - s1", { s0 = 5, s1 = 3 }) == 7)
      assert(S.evaluate("-s0//2 + 10", { s0 = 3 }) == 8)  -- (-s0)//2, as Python reads it
      assert(S.eq("s0 + s1", "s1+s0") and not S.eq("s0", "s1"))
      assert(S.div("2*s0", 2) == "s0")
      local exact, why = pcall(S.div, "s0", 2)
      assert(not exact and why:find("exactly"), why)
      local ok, err = pcall(S.div, "s0 + 1", "s0")
      assert(not ok and err:find("cannot divide"), err)
    end
  )lua",
                                 gm, with_shipped_scripts());
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
}

}  // namespace
}  // namespace graft
