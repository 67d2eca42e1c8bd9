// The graph API in Lua: reading, editing, value conversions, handle safety.
#include <doctest/doctest.h>

#include "graft/io/tabular.hpp"
#include "graft/ir/lint.hpp"
#include "graft/ir/python_repr.hpp"
#include "graft/passes/dead_code.hpp"
#include "lua_test_support.hpp"

using namespace graft;
using namespace graft::test;

namespace {

std::string data(const char* name) { return std::string(GRAFT_TEST_DATA) + "/" + name; }

GraphModule load(const char* name) {
  Result<GraphModule> r = load_graph_file(data(name));
  REQUIRE_MESSAGE(r.is_ok(), r.status().message());
  return std::move(r).value();
}

/// Runs `script` and requires success.
void run_ok(const std::string& script, GraphModule& gm) {
  lua::PipelineReport r = run_on(script, gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
}

std::string run_error(const std::string& script, GraphModule& gm, lua::SandboxOptions options = {}) {
  lua::PipelineReport r = run_on(script, gm, std::move(options));
  REQUIRE_FALSE(r.ok());
  return r.error->to_string();
}

}  // namespace

TEST_CASE("lua api: every argument kind survives Lua unchanged (read args/kwargs/meta, write them back)") {
  // all_kinds.json holds every argument kind, nested containers, inf/nan, dicts with
  // non-string keys, and free-form metadata. Writing back what Lua read must be the identity.
  GraphModule gm = load("all_kinds.json");
  const std::string before = save(gm);
  run_ok(R"(return graft.pass{name = "rewrite", run = function(g)
      for n in g:nodes() do
        n.args = n.args
        n.kwargs = n.kwargs
        for k, v in pairs(n.meta) do n:set_meta(k, v) end
      end
    end})",
         gm);
  CHECK(save(gm) == before);
}

TEST_CASE("lua api: node fields and filters") {
  GraphModule gm = parse(small_aten_graph());
  run_ok(R"(return function(g)
      local names = {}
      for n in g:nodes() do names[#names + 1] = n.name .. ":" .. n.op end
      assert(table.concat(names, ",") == "x:placeholder,y:placeholder,add:call_function,relu:call_function,output:output", table.concat(names, ","))
      local adds = g:node_list{op = "call_function", target = "torch.ops.aten.add.Tensor"}
      assert(#adds == 1 and adds[1].name == "add")
      assert(#g:node_list("placeholder") == 2)
      assert(#g:node_list{target = {"torch.ops.aten.relu.default", "torch.ops.aten.add.Tensor"}} == 2)
      assert(#g:node_list{target = "not.in.graph"} == 0)
      local add = g:find("add")
      assert(add == adds[1], "handles of one node are the same value")
      assert(add.args[1] == g:find("x") and add.args[2] == g:find("y"))
      assert(#add.args == 2 and getmetatable(add.args) == "graft.Tuple")
      assert(add.users[1].name == "relu" and #add.users == 1)
      assert(add.inputs[1].name == "x" and add.inputs[2].name == "y")
      assert(add.next.name == "relu" and add.prev.name == "y")
      assert(g:find("x").prev == nil)
      assert(add.meta.stack_trace == "model.py:3")
      assert(tostring(add) == "add" and #g == 5)
      assert(g:output().args[1] == g:find("relu"))
      assert(g:find("nope") == nil)
    end)",
         gm);
}

TEST_CASE("lua api: Lua values map to FX argument kinds") {
  GraphModule gm = parse(small_aten_graph());
  run_ok(R"(return function(g)
      local add = g:find("add")
      add:set_kwarg("i", 2)
      add:set_kwarg("f", 2.0)
      add:set_kwarg("b", true)
      add:set_kwarg("n", graft.None)
      add:set_kwarg("l", {1, 2})
      add:set_kwarg("t", graft.tuple{1, add.args[1]})
      add:set_kwarg("d", {b = 1, a = 2})
      add:set_kwarg("od", graft.dict{{"z", 1}, {"a", 2}})
      add:set_kwarg("s", graft.slice(nil, 3))
      add:set_kwarg("e", graft.tuple{graft.Ellipsis, 0})
      assert(tostring(graft.Ellipsis) == "Ellipsis" and graft.Ellipsis ~= graft.None)
      add:set_kwarg("dt", graft.dtype("torch.float16"))
      add:set_kwarg("dev", graft.device("cuda:0"))
      add:set_kwarg("lay", graft.layout("strided"))
      add:set_kwarg("mf", graft.memory_format("channels_last"))
    end)",
         gm);
  const NodeId add = gm.graph.find("add");
  // Checked against FX's own spelling of each value (print_tabular's kwargs column).
  CHECK(format_kwargs(gm.graph, add) ==
        "{'i': 2, 'f': 2.0, 'b': True, 'n': None, 'l': [1, 2], 't': (1, x), 'd': {'a': 2, 'b': 1}, "
        "'od': {'z': 1, 'a': 2}, 's': slice(None, 3, None), 'e': (Ellipsis, 0), 'dt': torch.float16, "
        "'dev': device(type='cuda', index=0), 'lay': torch.strided, 'mf': torch.channels_last}");
}

TEST_CASE("lua api: values that are not arguments are refused with the path to them") {
  GraphModule gm = parse(small_aten_graph());
  CHECK(run_error(R"(return function(g) g:find("add"):set_kwarg("k", {1, {print}}) end)", gm) ==
        "test.lua:1: pass 'test.lua:1': kwargs.k[2][1]: a function cannot be a graph argument");
  CHECK(run_error(R"(return function(g) g:find("add").args = {1, {a = 1, 2}} end)", gm) ==
        "test.lua:1: pass 'test.lua:1': args[2]: a table cannot mix list items and named fields");
}

TEST_CASE("lua api: torch.fx's insert_relu_after_add example, with inserting_after and replace_all_uses_with") {
  GraphModule gm = parse(small_aten_graph());
  run_ok(R"(return function(g)
      for n in g:nodes{op = "call_function", target = "torch.ops.aten.add.Tensor"} do
        local _ <close> = g:inserting_after(n)
        local r = g:call_function("torch.ops.aten.relu.default", {n})
        n:replace_all_uses_with(r)
      end
    end)",
         gm);
  // relu_1 comes right after add, takes add, and every former user of add now uses relu_1.
  CHECK(tabular(gm.graph).find("relu_1") != std::string::npos);
  const NodeId add = gm.graph.find("add");
  const NodeId r1 = gm.graph.find("relu_1");
  REQUIRE(r1 != kNoNode);
  CHECK(gm.graph.next(add) == r1);
  CHECK(format_args(gm.graph, r1) == "(add,)");
  CHECK(format_args(gm.graph, gm.graph.find("relu")) == "(relu_1,)");
  CHECK(gm.graph.users(add) == std::vector<NodeId>{r1});
}

TEST_CASE("lua api: inserting scope with a function restores the insertion point, even on error") {
  GraphModule gm = parse(small_aten_graph());
  run_ok(R"(return function(g)
      local x = g:find("x")
      local ok = pcall(g.inserting_before, g, g:find("relu"), function()
        g:call_function("torch.ops.aten.neg.default", {x}, nil, "neg")
        error("stop")
      end)
      assert(not ok)
      local last = g:call_function("torch.ops.aten.abs.default", {x}, nil, "abs_end")
      assert(last.prev.name == "output", "appended at the end again: " .. last.prev.name)
      last:erase()
    end)",
         gm);
  CHECK(gm.graph.next(gm.graph.find("neg")) == gm.graph.find("relu"));
}

TEST_CASE("lua api: replace_all_uses_with filter, erase refused while used, DCE, lint") {
  GraphModule gm = parse(small_aten_graph());
  run_ok(R"(return function(g)
      local x, y, add = g:find("x"), g:find("y"), g:find("add")
      local changed = x:replace_all_uses_with(y, function(user) return user.name ~= "add" end)
      assert(#changed == 0)
      changed = x:replace_all_uses_with(y, function(user) return user.name == "add" end)
      assert(#changed == 1 and changed[1] == add)
      assert(add.args[1] == y and add.args[2] == y)
      local ok, err = pcall(g.erase_node, g, add)
      assert(not ok and err:find("cannot erase node 'add': it is still used by relu", 1, true), err)
      local dead = g:call_function("torch.ops.aten.neg.default", {y})
      assert(g:eliminate_dead_code() == 1)
      assert(not dead.alive)
      assert(g:lint())
    end)",
         gm);
  CHECK(gm.graph.find("neg") == kNoNode);
}

TEST_CASE("lua api: lint reports a broken graph without raising") {
  GraphModule gm = parse(small_aten_graph());
  run_ok(R"(return function(g)
      local relu = g:find("relu")
      g:find("add"):prepend(relu)  -- relu now comes before its input
      local ok, msg = g:lint()
      assert(ok == false and msg:find("relu", 1, true), msg)
      g:find("add"):append(relu)   -- and back
      assert(g:lint())
    end)",
         gm);
}

TEST_CASE("lua api: handles cannot outlive their node or their pass") {
  GraphModule gm = parse(small_aten_graph());
  SUBCASE("an erased node") {
    CHECK(run_error(R"(return function(g)
        local n = g:call_function("torch.ops.aten.neg.default", {g:find("x")})
        n:erase()
        return n.name
      end)",
                    gm) == "test.lua:4: pass 'test.lua:1': node handle used after the node was erased");
  }
  SUBCASE("a node kept past its pass") {
    auto sb = sandbox_with(R"(
      local kept
      return graft.pipeline{ passes = {
        graft.pass{name = "keep", run = function(g) kept = g:find("add") end},
        graft.pass{name = "use", run = function(g) return kept.name end},
      }})");
    lua::PipelineReport r = lua::run_pipeline(*sb, gm);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error->to_string() == "test.lua:5: pass 'use': node handle used after its pass ended");
    // The same script runs again cleanly: nothing was corrupted.
    lua::PipelineReport again = lua::run_pipeline(*sb, gm);
    CHECK_FALSE(again.ok());
  }
  SUBCASE("a graph kept past its pass") {
    auto sb = sandbox_with(R"(
      local kept
      return graft.pipeline{ passes = {
        graft.pass{name = "keep", run = function(g) kept = g end},
        graft.pass{name = "use", run = function(g) return #kept end},
      }})");
    lua::PipelineReport r = lua::run_pipeline(*sb, gm);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error->to_string() == "test.lua:5: pass 'use': graph handle used after its pass ended");
  }
  SUBCASE("a node of one graph used as an argument in another (a Transformer's old and new graphs)") {
    CHECK(run_error(R"(return graft.transformer{ call_function = function(g, target, args, kwargs, node)
        return g:call_function(target, {node}, kwargs)
      end})",
                    gm) ==
          "test.lua:2: pass 'transformer at test.lua:1': args[1]: node 'add' belongs to another graph");
  }
}

TEST_CASE("lua api: checks see a read-only graph") {
  GraphModule gm = parse(small_aten_graph());
  lua::PipelineReport r = run_on(R"(return graft.pipeline{
      passes = { function(g) end },
      checks = { function(g) g:find("add").target = "x.y" end },
      run_checks_after_each_pass = true,
    })",
                                 gm);
  REQUIRE_FALSE(r.ok());
  CHECK(r.stop_reason == StopReason::CheckFailed);
  CHECK(r.error->message ==
        "check 'test.lua:3' failed before the first pass: test.lua:3: this graph is read-only here (checks may "
        "look, not edit)");
}

TEST_CASE("lua api: modules and parameters by dotted name") {
  GraphModule gm = load("all_kinds.json");
  run_ok(R"(return function(g)
      local paths = g:modules()
      assert(#paths >= 1)
      for _, p in ipairs(paths) do
        local m = g:module(p)
        assert(m.path == p and type(m.class) == "string")
        for _, t in ipairs(m.parameters) do
          local full = (p == "" and "" or p .. ".") .. t.name
          assert(g:has_attribute(full), full)
          local a = g:attribute(full)
          assert(a.dtype == t.dtype and #a.shape == #t.shape, full)
        end
      end
      assert(g:module("no.such.module") == nil and not g:has_attribute("no.such"))
    end)",
         gm);
}

TEST_CASE("lua api: operator schemas, as torch.fx's ScalarToTensorPass example reads them") {
  GraphModule gm = parse(small_aten_graph());
  run_ok(R"(return function(g)
      local s = g:find("add").schema
      assert(s.name == "aten::add" and s.overload == "Tensor")
      local a = s.arguments
      assert(#a == 3 and a[1].name == "self" and a[1].is_tensor and not a[1].kwarg_only)
      assert(a[3].name == "alpha" and a[3].kwarg_only and a[3].default == "1" and a[3].type == "Scalar")
      assert(graft.schema("torch.ops.aten.add_.Tensor").arguments[1].is_mutable)
      assert(graft.schema("torch.relu") == nil)
      assert(g:find("x").schema == nil)
    end)",
         gm);
}

TEST_CASE("lua api: metadata read and write") {
  GraphModule gm = parse(small_aten_graph());
  run_ok(R"(return function(g)
      local add = g:find("add")
      add:set_meta("tensor_meta", {shape = {2, "s0"}, dtype = "float32", stride = {1, 1}, device = "cpu"})
      add:set_meta("custom", {b = {1, 2.5, "x"}, a = graft.None})
      add:set_meta("stack_trace", nil)
      local tm = add.meta.tensor_meta
      assert(tm.shape[1] == 2 and tm.shape[2] == "s0" and tm.dtype == "float32")
    end)",
         gm);
  const NodeMeta& m = gm.graph.meta(gm.graph.find("add"));
  REQUIRE(m.extra.size() == 1);
  CHECK(m.extra[0].first == "custom");
  CHECK(m.extra[0].second == R"({"a":null,"b":[1,2.5,"x"]})");  // plain tables: keys sorted
  CHECK(m.tensor_meta.kind == ValueMeta::Kind::Tensor);
  CHECK(m.tensor_meta.tensor.shape[1].is_symbolic());
}

TEST_CASE("lua api: identities, lists without holes, dict order, targets, placeholders") {
  GraphModule gm = parse(small_aten_graph());
  run_ok(R"lua(return function(g)
      local add = g:find("add")
      assert(add.graph == g and rawequal(add.graph, g), "one graph handle per pass")
      local ok, err = pcall(add.set_kwarg, add, "h", {[2] = 1})
      assert(not ok and err:find("kwargs.h: a list must have items 1..n without holes", 1, true), err)
      ok, err = pcall(function() add.target = 5 end)
      assert(not ok and err:find("string expected, got number", 1, true), err)
      -- Python's dict order: a key deleted and added again goes last.
      local d = graft.dict{{"a", 1}, {"b", 2}}
      d.a = nil
      d.a = 3
      local keys = {}
      for k in pairs(d) do keys[#keys + 1] = k end
      assert(table.concat(keys, ",") == "b,a", table.concat(keys, ","))
      assert(tostring(graft.device("cuda:0")) == "device(type='cuda', index=0)")
      assert(tostring(graft.device("cpu")) == "device(type='cpu')")
      -- Python's repr, readable whatever the bytes: non-finite floats, NUL, bytes not UTF-8.
      local shown = tostring(graft.list{0/0, 1/0, -1/0, "a\0b", "\xff", "caf\u{e9}", "it's"})
      assert(shown == [=[[nan, inf, -inf, 'a\x00b', '\xff', 'caf]=] .. "\u{e9}" .. [=[', 'it\'s']]=], shown)
      -- A dict keeps a deleted-then-added key last also after many such moves (each O(1)).
      for _ = 1, 3 do d.b = nil d.b = 0 d.a = nil d.a = 0 end
      keys = {}
      for k in pairs(d) do keys[#keys + 1] = k end
      assert(table.concat(keys, ",") == "b,a" and #d == 2, table.concat(keys, ","))
      local z = g:placeholder("z")
      assert(z.prev.name == "y" and z.next.name == "add", "new inputs go after the last input")
    end)lua",
         gm);
}

TEST_CASE("lua api: replace_all_uses_with a constant folds every use (nested too), with a filter") {
  GraphModule gm = parse(graph_doc(
      R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},
{"name":"y","op":"placeholder","target":"y","args":[],"kwargs":{},"meta":{}},
{"name":"add","op":"call_function","target":"torch.add","args":[{"node":"x"},{"node":"y"}],"kwargs":{},"meta":{}},
{"name":"cat","op":"call_function","target":"torch.cat","args":[[{"node":"add"},{"node":"y"}]],"kwargs":{"out":{"node":"y"}},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"cat"}],"kwargs":{},"meta":{}})"));
  run_ok(R"(return function(g)
      local changed = g:find("y"):replace_all_uses_with(2.5, function(user) return user.name == "add" end)
      assert(#changed == 1 and changed[1].name == "add")
      changed = g:find("y"):replace_all_uses_with(graft.None)
      assert(#changed == 1 and changed[1].name == "cat" and #g:find("y").users == 0)
    end)",
         gm);
  CHECK(format_args(gm.graph, gm.graph.find("add")) == "(x, 2.5)");
  CHECK(format_args(gm.graph, gm.graph.find("cat")) == "([add, None],)");
  CHECK(gm.graph.kwargs(gm.graph.find("cat"))[0].second.is_none());
  CHECK(gm.graph.users(gm.graph.find("y")).empty());
  CHECK(lint(gm).is_ok());
  // A value holding a node is refused before anything changes (it could make a user read itself).
  GraphModule again = parse(small_aten_graph());
  const std::string before = save(again);
  auto sb = sandbox_with(R"(return function(g) g:find("add"):replace_all_uses_with({g:find("relu")}) end)");
  lua::PipelineReport r = lua::run_pipeline(*sb, again);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error->message.find("replace_all_uses_with: the value holds a node; pass the node itself, or a constant "
                              "without nodes") != std::string::npos);
  CHECK(save(again) == before);
}
