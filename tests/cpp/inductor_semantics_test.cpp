// MatchSemantics::Inductor (graft/match/subgraph_matcher.hpp): each rule where inductor's
// pattern matcher and torch.fx's differ, on a graph where the two give different answers.
// (tests/python/test_pattern_matcher_vs_inductor.py compares with inductor itself.)
#include <doctest/doctest.h>

#include "graft/match/pattern.hpp"
#include "graft/match/subgraph_matcher.hpp"
#include "graft/rewrite/replace_pattern.hpp"
#include "test_graphs.hpp"

using namespace graft;
using namespace graft::test;

namespace {

constexpr const char* kAdd = "torch.ops.aten.add.Tensor";
constexpr const char* kMul = "torch.ops.aten.mul.Tensor";
constexpr const char* kRelu = "torch.ops.aten.relu.default";

std::size_t count(const Pattern& p, const Graph& g, MatchSemantics semantics) {
  MatchOptions o;
  o.semantics = semantics;
  auto m = SubgraphMatcher::create(p, o);
  REQUIRE_MESSAGE(m.is_ok(), m.status().message());
  return m.value().match(g).size();
}

}  // namespace

TEST_CASE("inductor: two pattern inputs may bind one node") {
  Pattern p(graph_of(
      lines({ph("a"), ph("b"), call("add", kAdd, R"([{"node":"a"},{"node":"b"}])"), out(R"({"node":"add"})")})));
  Graph g = graph_of(lines({ph("x"), call("add", kAdd, R"([{"node":"x"},{"node":"x"}])"), out(R"([{"node":"add"}])")}));
  CHECK(count(p, g, MatchSemantics::Fx) == 0);
  CHECK(count(p, g, MatchSemantics::Inductor) == 1);
}

TEST_CASE("inductor: an inner node may have users outside when its user count allows") {
  // relu(add(x, y)) where add is also returned: FX refuses (add used outside); inductor asks
  // only that add has the users its pattern states.
  Pattern p(graph_of(lines({ph("a"), ph("b"), call("add", kAdd, R"([{"node":"a"},{"node":"b"}])"),
                            call("relu", kRelu, R"([{"node":"add"}])"), out(R"({"node":"relu"})")})));
  Graph g = graph_of(lines({ph("x"), ph("y"), call("add", kAdd, R"([{"node":"x"},{"node":"y"}])"),
                            call("relu", kRelu, R"([{"node":"add"}])"), out(R"([{"node":"relu"},{"node":"add"}])")}));
  CHECK(count(p, g, MatchSemantics::Fx) == 0);
  CHECK(count(p, g, MatchSemantics::Inductor) == 1);  // no users constraint: MULTIPLE
  p.constrain(p.graph.find("add")).users = 1;
  CHECK(count(p, g, MatchSemantics::Inductor) == 0);  // the default _users=1
}

TEST_CASE("inductor: keywords only the graph passes are not compared, omitted ones are defaults") {
  Pattern p(graph_of(
      lines({ph("a"), ph("b"), call("add", kAdd, R"([{"node":"a"},{"node":"b"}])"), out(R"({"node":"add"})")})));
  Graph alpha2 =
      graph_of(lines({ph("x"), ph("y"), call("add", kAdd, R"([{"node":"x"},{"node":"y"}])", R"({"alpha":2})"),
                      out(R"([{"node":"add"}])")}));
  CHECK(count(p, alpha2, MatchSemantics::Fx) == 0);  // the schema says alpha differs
  CHECK(count(p, alpha2, MatchSemantics::Inductor) == 1);

  Pattern with_alpha(
      graph_of(lines({ph("a"), ph("b"), call("add", kAdd, R"([{"node":"a"},{"node":"b"}])", R"({"alpha":1})"),
                      out(R"({"node":"add"})")})));
  Graph plain = graph_of(
      lines({ph("x"), ph("y"), call("add", kAdd, R"([{"node":"x"},{"node":"y"}])"), out(R"([{"node":"add"}])")}));
  CHECK(count(with_alpha, plain, MatchSemantics::Inductor) == 1);  // alpha omitted: its default, 1
  CHECK(count(with_alpha, alpha2, MatchSemantics::Inductor) == 0);

  // Positional arguments are counted, not reconciled through the schema.
  constexpr const char* kSum = "torch.ops.aten.sum.dim_IntList";
  Pattern three(graph_of(lines({ph("a"), call("sum", kSum, R"([{"node":"a"},[1],false])"), out(R"({"node":"sum"})")})));
  Graph two = graph_of(lines({ph("x"), call("sum", kSum, R"([{"node":"x"},[1]])"), out(R"([{"node":"sum"}])")}));
  CHECK(count(three, two, MatchSemantics::Fx) == 1);  // keepdim left out is its default, false
  CHECK(count(three, two, MatchSemantics::Inductor) == 0);
}

TEST_CASE("inductor: constants compare as Python's ==") {
  Pattern p(graph_of(lines({ph("a"), call("mul", kMul, R"([{"node":"a"},2])"), out(R"({"node":"mul"})")})));
  Graph g = graph_of(lines({ph("x"), call("mul", kMul, R"([{"node":"x"},2.0])"), out(R"([{"node":"mul"}])")}));
  CHECK(count(p, g, MatchSemantics::Fx) == 0);
  CHECK(count(p, g, MatchSemantics::Inductor) == 1);
  Graph three = graph_of(lines({ph("x"), call("mul", kMul, R"([{"node":"x"},3])"), out(R"([{"node":"mul"}])")}));
  CHECK(count(p, three, MatchSemantics::Inductor) == 0);
}

TEST_CASE("inductor: a replacement keeps matched nodes something outside still uses") {
  Pattern p(graph_of(lines({ph("a"), ph("b"), call("add", kAdd, R"([{"node":"a"},{"node":"b"}])"),
                            call("relu", kRelu, R"([{"node":"add"}])"), out(R"({"node":"relu"})")})));
  Graph g = graph_of(lines({ph("x"), ph("y"), call("add", kAdd, R"([{"node":"x"},{"node":"y"}])"),
                            call("relu", kRelu, R"([{"node":"add"}])"), out(R"([{"node":"relu"},{"node":"add"}])")}));
  Graph replacement = graph_of(
      lines({ph("a"), ph("b"), call("mul", kMul, R"([{"node":"a"},{"node":"b"}])"), out(R"({"node":"mul"})")}));
  MatchOptions o;
  o.semantics = MatchSemantics::Inductor;
  auto matcher = SubgraphMatcher::create(p, o);
  REQUIRE(matcher.is_ok());
  auto done = replace_pattern(g, matcher.value(), replacement);
  REQUIRE_MESSAGE(done.is_ok(), done.status().message());
  CHECK(done.value().size() == 1);
  CHECK(g.find("relu") == kNoNode);
  REQUIRE(g.find("add") != kNoNode);  // still returned by the graph
  CHECK(g.users(g.find("add")).size() == 1);
}
