// What a host writes: the umbrella header alone (graft/lua.hpp pulls in the engine's) is enough
// to read a graph, match, rewrite, clean up, check and save it.
#include "graft/lua.hpp"

#include <doctest/doctest.h>

using namespace graft;

TEST_CASE("umbrella headers: one include gives the whole API") {
  Result<Graph> g = parse_graph_text(R"(x = placeholder
detach = call_function torch.detach(x)
relu = call_function torch.relu(detach)
unused = call_function torch.neg(x)
return relu
)");
  REQUIRE(g.is_ok());
  GraphModule gm;
  gm.graph = std::move(g).value();
  Result<Graph> pattern = parse_graph_text("a = placeholder\nd = call_function torch.detach(a)\nreturn d\n");
  Result<Graph> replacement = parse_graph_text("a = placeholder\nreturn a\n");
  REQUIRE((pattern.is_ok() && replacement.is_ok()));
  Result<SubgraphMatcher> matcher = SubgraphMatcher::create(*pattern);
  REQUIRE(matcher.is_ok());
  auto done = replace_pattern(gm, *matcher, *replacement);
  REQUIRE(done.is_ok());
  CHECK(done->size() == 1);
  CHECK(eliminate_dead_code(gm.graph) == 1);  // the unused neg
  CHECK(lint(gm).is_ok());
  CHECK(to_graph_text(gm.graph) == "x = placeholder\nrelu = call_function torch.relu(x)\nreturn relu\n");
  Result<std::string> json = to_graph_json(gm);
  REQUIRE(json.is_ok());
  CHECK(json->find("\"torch.relu\"") != std::string::npos);
  CHECK(stop_reason_name(StopReason::Converged) == "converged");
  CHECK(lua::Sandbox::create().is_ok());
}
