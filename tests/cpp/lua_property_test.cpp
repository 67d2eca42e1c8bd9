// The save property: whatever the Lua API accepts, graft saves without changing it. Random
// edits (tests/lua/property/random_edits.lua, values that a graph file cannot hold included)
// either raise, or give a graph that saves, loads back equal to it, and saves to the same bytes.
#include "lua_test_support.hpp"

#include "graft/ir/graph_diff.hpp"

using namespace graft;
using graft::test::parse;
using graft::test::small_aten_graph;

TEST_CASE("property: random edits through the Lua API either raise or save and load back unchanged") {
  const std::filesystem::path script = std::filesystem::path(GRAFT_TEST_LUA) / "property" / "random_edits.lua";
  int kept = 0;
  int refused = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    CAPTURE(seed);
    lua::SandboxOptions o;
    o.seed = seed;
    o.roots = {script.parent_path()};
    auto sb = lua::Sandbox::create(o);
    REQUIRE(sb.is_ok());
    REQUIRE(sb.value()->load_file(script).is_ok());
    GraphModule gm = parse(small_aten_graph());
    lua::PipelineReport r = lua::run_pipeline(*sb.value(), gm);
    if (!r.ok()) {  // a pass that leaves an invalid graph is refused as a whole
      ++refused;
      continue;
    }
    ++kept;
    Result<std::string> text = to_graph_json(gm);
    REQUIRE_MESSAGE(text.is_ok(), text.status().message());
    Result<GraphModule> back = parse_graph_json(text.value(), "saved.json");
    REQUIRE_MESSAGE(back.is_ok(), (back.status().message() + "\n" + text.value()));
    const GraphDiff d = diff_by_name(gm.graph, back->graph);
    CHECK_MESSAGE(d.added + d.removed + d.changed == 0, text.value());
    Result<std::string> again = to_graph_json(back.value());
    REQUIRE(again.is_ok());
    CHECK(again.value() == text.value());
  }
  // Both outcomes are exercised.
  CHECK(kept >= 50);
  CHECK(refused >= 10);
}
