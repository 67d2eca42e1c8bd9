// graft.support, g:partition, g:fuse_partitions, g:topo_sort and g:add_submodule.
#include "graft/io/graph_text.hpp"
#include "graft/ir/lint.hpp"
#include "graft/lua/script_host.hpp"
#include "graft/lua/support.hpp"
#include "lua_test_support.hpp"
#include "test_graphs.hpp"

namespace graft {
namespace {

using test::run_on;

constexpr std::string_view kGraph = R"(
  x = placeholder
  a = call_function torch.add(x, 1)
  u = call_function torch.relu(a)
  b = call_function torch.add(u, 1)
  c = call_function torch.mul(x, 2)
  return (b, c)
)";

TEST_CASE("lua partition: support rules, reasons, and fusing from a pass") {
  GraphModule gm = test::module_of_text(kGraph);
  lua::PipelineReport r = run_on(R"lua(
      local S = graft.support
      local adds = S.targets{ "torch.add", "torch.mul", name = "add_mul" }
      local not_c = S.predicate(function(node) return node.name ~= "c" end, "not c")
      return function(g)
        local p = g:partition{ support = adds, allows_single_node_partition = true }
        assert(#p.partitions == 2, #p.partitions)
        assert(p.partitions[1][1].name == "b" and p.partitions[1][2].name == "c")
        assert(p.partitions[2][1].name == "a")
        assert(#p.left_out == 1 and p.left_out[1].node.name == "u")
        assert(p.left_out[1].reason == "unsupported" and p.left_out[1].rule == "add_mul")

        local q = g:partition{ support = S.chain(adds, not_c) }
        assert(#q.partitions == 0)
        assert(q.left_out[1].node.name == "a" and q.left_out[1].reason == "single_node")
        assert(q.left_out[1].blocked_by.name == "u")
        assert(q.left_out[4].node.name == "c" and q.left_out[4].rule == "not c", q.left_out[4].rule)
        assert(tostring(S.negate(adds)) == "graft.Support(not(add_mul))")
        assert(#g:partition{ support = S.any_chain(S["not"](adds), not_c), allows_single_node_partition = true }.partitions == 1)

        local sorted = g:topo_sort{ g:find("b"), g:find("a"), g:find("u") }
        assert(sorted[1].name == "a" and sorted[2].name == "u" and sorted[3].name == "b")

        local fused = g:partition{ support = adds, fuse = true, prefix = "part_" }
        assert(fused.calls[1].name == "part_0" and fused.calls[1].op == "call_module")
        assert(g:module("part_0").has_graph and g:module("part_0").class == "torch.fx.graph_module.GraphModule")
        assert(fused.calls[1].module_class == "torch.fx.graph_module.GraphModule")
      end)lua",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
  CHECK(to_graph_text(gm.graph) ==
        "x = placeholder\n"
        "a = call_function torch.add(x, 1)\n"
        "u = call_function torch.relu(a)\n"
        "part_0 = call_module part_0(u, x)\n"
        "getitem = call_function _operator.getitem(part_0, 0)\n"
        "getitem_1 = call_function _operator.getitem(part_0, 1)\n"
        "return (getitem, getitem_1)\n");
  CHECK(lint(gm).is_ok());
}

TEST_CASE("lua partition: a submodule built in Lua, called, and undone with a failing pass") {
  GraphModule gm = test::module_of_text(kGraph);
  lua::PipelineReport r = run_on(R"lua(
      return function(g)
        g:add_submodule("double", function(sub)
          local x = sub:placeholder("x")
          sub:output(sub:call_function("torch.mul", { x, 2 }))
        end)
        local out = g:output()
        g:inserting_before(out, function()
          local d = g:call_module("double", { g:find("b") })
          out:set_arg(1, { d, g:find("c") })
        end)
      end)lua",
                                 gm);
  REQUIRE_MESSAGE(r.ok(), r.error->to_string());
  REQUIRE(gm.modules.find("double") != nullptr);
  CHECK(to_graph_text(*gm.modules.find("double")->graph) ==
        "x = placeholder\nmul = call_function torch.mul(x, 2)\nreturn mul\n");
  CHECK(lint(gm).is_ok());

  const std::string before = to_graph_text(gm.graph);
  lua::PipelineReport failed = run_on(R"lua(
      return function(g)
        g:fuse_partitions{ { g:find("b"), g:find("c") } }
        assert(g:module("fused_0"))
        error("changed my mind")
      end)lua",
                                      gm);
  CHECK_FALSE(failed.ok());
  CHECK(gm.modules.find("fused_0") == nullptr);
  CHECK(to_graph_text(gm.graph) == before);

  lua::PipelineReport broken = run_on(R"lua(
      return function(g)
        g:add_submodule("bad", function(sub) sub:placeholder("x") end)
      end)lua",
                                      gm);
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.error->message.find("the graph built for 'bad' is not valid: graph has no output node") !=
        std::string::npos);
  lua::PipelineReport bad_path = run_on(R"lua(
      return function(g) g:add_submodule("a.b", function(sub) sub:output(nil) end) end)lua",
                                        gm);
  REQUIRE_FALSE(bad_path.ok());
  CHECK(bad_path.error->message.find("'a.b' has no parent module 'a'") != std::string::npos);
  lua::PipelineReport bad_name = run_on(R"lua(
      return function(g) g:add_submodule("x y", function(sub) sub:output(nil) end) end)lua",
                                        gm);
  REQUIRE_FALSE(bad_name.ok());
  CHECK(bad_name.error->message.find("'x y' is not a module path") != std::string::npos);
  lua::PipelineReport none_out = run_on(R"lua(
      return function(g) g:add_submodule("nothing", function(sub) sub:output(nil) end) end)lua",
                                        gm);
  REQUIRE_MESSAGE(none_out.ok(), none_out.error->to_string());
  CHECK(to_graph_text(*gm.modules.find("nothing")->graph) == "return None\n");
  lua::PipelineReport cycle = run_on(R"lua(
      return function(g) g:fuse_partitions{ { g:find("a"), g:find("b") } } end)lua",
                                     gm);
  REQUIRE_FALSE(cycle.ok());
  CHECK(cycle.error->message.find("fusing would create a cycle: partition 0 {a, b} -> 'u'") != std::string::npos);
}

TEST_CASE("lua partition: a support script seen from the host, and a predicate that raises") {
  GraphModule gm = test::module_of_text(kGraph);
  auto sb = test::sandbox_with(R"lua(
      return { support = graft.support.targets{ "torch.add" }, allows_single_node_partition = true,
               exclude_nodes = { "b" } })lua");
  Status s = lua::with_support(*sb, gm, [&](const OperatorSupport& support, const PartitionOptions& options) {
    CHECK(options.allows_single_node_partition);
    Result<Partitioning> p = propose_partitions(gm, support, options);
    REQUIRE(p.is_ok());
    REQUIRE(p->partitions.size() == 1);
    CHECK(gm.graph.name(p->partitions[0][0]) == "a");
    return Status::ok();
  });
  CHECK_MESSAGE(s.is_ok(), s.message());

  auto raising = test::sandbox_with(R"lua(
      return graft.support.predicate(function(node) if node.name == "b" then error("no b") end return true end))lua",
                                    {}, "raising.lua");
  Status e = lua::with_support(*raising, gm, [&](const OperatorSupport& support, const PartitionOptions& options) {
    return propose_partitions(gm, support, options).status();
  });
  REQUIRE_FALSE(e.is_ok());
  CHECK(e.message().find("support predicate: raising.lua:2: no b") != std::string::npos);
  auto wrong = test::sandbox_with("return 42");
  Status w =
      lua::with_support(*wrong, gm, [](const OperatorSupport&, const PartitionOptions&) { return Status::ok(); });
  REQUIRE_FALSE(w.is_ok());
  CHECK(w.message().find("must return a support rule") != std::string::npos);
}

TEST_CASE("lua partition: a support module is reloaded with the pipeline that requires it") {
  test::TempDir dir("graft_support_reload");
  const auto pipeline = dir.path / "pipeline.lua";
  test::write_text(pipeline, R"lua(
      local support = require("backend_support")
      return graft.pass{ name = "fuse", run = function(g)
        g:partition{ support = support, allows_single_node_partition = true, fuse = true }
      end })lua");
  test::write_text(dir.path / "backend_support.lua", "return graft.support.targets{ \"torch.add\" }\n");
  lua::ScriptHostOptions options;
  options.use_inotify = false;
  lua::ScriptHost host(options);
  REQUIRE(host.load(pipeline).is_ok());
  auto fused_nodes = [&] {
    GraphModule gm = test::module_of_text(kGraph);
    lua::PipelineReport r = host.run(pipeline, gm);
    REQUIRE_MESSAGE(r.ok(), r.error->to_string());
    std::size_t inside = 0;
    for (const ModuleInfo& m : gm.modules.entries())
      if (m.graph) inside += m.graph->size();
    return inside;
  };
  // add only: {b} and {a}, three nodes each (placeholder, add, output)
  CHECK(fused_nodes() == 6);
  test::write_text(dir.path / "backend_support.lua", "return graft.support.targets{ \"torch.add\", \"torch.mul\" }\n");
  std::vector<lua::ReloadEvent> events = host.poll();
  REQUIRE(events.size() == 1);
  CHECK(events[0].ok);
  CHECK(fused_nodes() == 8);  // mul too: {b, c} takes u, b, x, c and the output
}

}  // namespace
}  // namespace graft
