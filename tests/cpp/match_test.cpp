// SubgraphMatcher: the behaviours of torch.fx's matcher, each on a small graph and pattern, with
// the count and bindings FX gives (tests/golden/fx_semantics/COVERAGE.md lists them).
#include <doctest/doctest.h>

#include "graft/io/graph_json.hpp"
#include "graft/match/fusion_cycle.hpp"
#include "graft/match/subgraph_matcher.hpp"
#include "graft/passes/normalize_args.hpp"
#include "test_graphs.hpp"

using namespace graft;
using namespace graft::test;

namespace {

constexpr const char* kSigmoid = "torch.sigmoid";
constexpr const char* kAdd = "torch.ops.aten.add.Tensor";
constexpr const char* kRelu = "torch.ops.aten.relu.default";

std::vector<SubgraphMatch> find(const Graph& pattern, const Graph& g, MatchOptions o = {}) {
  auto m = SubgraphMatcher::create(pattern, o);
  REQUIRE_MESSAGE(m.is_ok(), m.status().message());
  return m.value().match(g);
}

std::string names(const Graph& g, const SubgraphMatch& m) {
  std::string s;
  for (NodeId n : m.returning_nodes) s += (s.empty() ? "" : ",") + g.name(n);
  return s;
}

}  // namespace

TEST_CASE("matcher: a chain of 4 sigmoids and a 2-sigmoid pattern gives 2 matches, earliest anchor first") {
  Graph g = graph_of(lines({ph("x"), call("s1", kSigmoid, R"([{"node":"x"}])"),
                            call("s2", kSigmoid, R"([{"node":"s1"}])"), call("s3", kSigmoid, R"([{"node":"s2"}])"),
                            call("s4", kSigmoid, R"([{"node":"s3"}])"), out(R"({"node":"s4"})")}));
  Graph p = graph_of(lines({ph("a"), call("p1", kSigmoid, R"([{"node":"a"}])"),
                            call("p2", kSigmoid, R"([{"node":"p1"}])"), out(R"({"node":"p2"})")}));
  auto all = find(p, g, MatchOptions{.remove_overlapping_matches = false});
  REQUIRE(all.size() == 3);  // anchored at s2, s3, s4
  auto kept = find(p, g);
  REQUIRE(kept.size() == 2);
  CHECK(names(g, kept[0]) == "s2");
  CHECK(names(g, kept[1]) == "s4");
  CHECK(kept[0].placeholder_nodes[0].node == g.find("x"));
}

TEST_CASE("matcher: node bindings are injective: a + b does not match x + x") {
  Graph g = graph_of(lines({ph("x"), call("add", kAdd, R"([{"node":"x"},{"node":"x"}])"), out(R"({"node":"add"})")}));
  Graph p = graph_of(
      lines({ph("a"), ph("b"), call("add", kAdd, R"([{"node":"a"},{"node":"b"}])"), out(R"({"node":"add"})")}));
  CHECK(find(p, g).empty());
  // ...while a + a does (one placeholder used twice must bind one value).
  Graph p2 = graph_of(lines({ph("a"), call("add", kAdd, R"([{"node":"a"},{"node":"a"}])"), out(R"({"node":"add"})")}));
  CHECK(find(p2, g).size() == 1);
}

TEST_CASE("matcher: literals are type-strict, lists and tuples interchangeable") {
  auto graph_with = [](const char* arg) {
    return graph_of(
        lines({ph("x"), call("add", kAdd, std::string(R"([{"node":"x"},)") + arg + "]"), out(R"({"node":"add"})")}));
  };
  Graph p_int = graph_of(lines({ph("a"), call("add", kAdd, R"([{"node":"a"},1])"), out(R"({"node":"add"})")}));
  CHECK(find(p_int, graph_with("1")).size() == 1);
  CHECK(find(p_int, graph_with("1.0")).empty());  // 1 is not 1.0
  CHECK(find(p_int, graph_with("true")).empty());  // 1 is not True
  CHECK(find(p_int, graph_with("2")).empty());
  CHECK(find(p_int, graph_with("2"), MatchOptions{.ignore_literals = true}).size() == 1);
  Graph p_list = graph_of(lines({ph("a"), call("add", kAdd, R"([{"node":"a"},[1,2]])"), out(R"({"node":"add"})")}));
  CHECK(find(p_list, graph_with(R"({"tuple":[1,2]})")).size() == 1);
  CHECK(find(p_list, graph_with("[1,2,3]")).empty());
  // A placeholder binds a whole literal, and the same literal again where it is reused.
  Graph p_bind = graph_of(
      lines({ph("a"), ph("k"), call("add", kAdd, R"([{"node":"a"},{"node":"k"}])"), out(R"({"node":"add"})")}));
  auto m = find(p_bind, graph_with("[1,2]"));
  REQUIRE(m.size() == 1);
  REQUIRE(m[0].placeholder_nodes[1].literal != nullptr);
  CHECK(m[0].placeholder_nodes[1].literal->holds<List>());
}

TEST_CASE("matcher: an inner node used outside the match is no match, returned nodes may be") {
  // add feeds relu (matched) and also the output directly: add is inner in pattern add->relu.
  Graph g = graph_of(
      lines({ph("x"), ph("y"), call("add", kAdd, R"([{"node":"x"},{"node":"y"}])"),
             call("relu", kRelu, R"([{"node":"add"}])"), out(R"({"tuple":[{"node":"relu"},{"node":"add"}]})")}));
  Graph p = graph_of(lines({ph("a"), ph("b"), call("add", kAdd, R"([{"node":"a"},{"node":"b"}])"),
                            call("relu", kRelu, R"([{"node":"add"}])"), out(R"({"node":"relu"})")}));
  CHECK(find(p, g).empty());
  // Returning add too makes it a returned node: now it may be used outside.
  Graph p2 = graph_of(
      lines({ph("a"), ph("b"), call("add", kAdd, R"([{"node":"a"},{"node":"b"}])"),
             call("relu", kRelu, R"([{"node":"add"}])"), out(R"({"tuple":[{"node":"relu"},{"node":"add"}]})")}));
  auto m = find(p2, g);
  REQUIRE(m.size() == 1);
  CHECK(names(g, m[0]) == "relu,add");
  CHECK(m[0].anchors.size() == 1);  // add is used inside the pattern: not an anchor
}

TEST_CASE("matcher: a match whose fusion would create a cycle is dropped") {
  // add -> neg -> mul and add -> mul: pattern add->mul (with mul's other input a placeholder).
  // Binding that placeholder to neg would put neg outside between two matched nodes.
  Graph g = graph_of(lines({ph("x"), call("add", kAdd, R"([{"node":"x"},{"node":"x"}])"),
                            call("neg", "torch.ops.aten.neg.default", R"([{"node":"add"}])"),
                            call("mul", "torch.ops.aten.mul.Tensor", R"([{"node":"add"},{"node":"neg"}])"),
                            out(R"({"node":"mul"})")}));
  Graph p = graph_of(
      lines({ph("a"), ph("b"), call("add", kAdd, R"([{"node":"a"},{"node":"a"}])"),
             call("mul", "torch.ops.aten.mul.Tensor", R"([{"node":"add"},{"node":"b"}])"), out(R"({"node":"mul"})")}));
  CHECK(find(p, g).empty());  // (here containment already refuses it: neg uses the inner add)
  // Returning add too lets it have outside users, so containment passes; the cycle through
  // neg is what refuses the match now.
  Graph p2 = graph_of(lines({ph("a"), ph("b"), call("add", kAdd, R"([{"node":"a"},{"node":"a"}])"),
                             call("mul", "torch.ops.aten.mul.Tensor", R"([{"node":"add"},{"node":"b"}])"),
                             out(R"({"tuple":[{"node":"mul"},{"node":"add"}]})")}));
  CHECK(find(p2, g).empty());
  Graph g_ok = graph_of(lines({ph("x"), ph("z"), call("add", kAdd, R"([{"node":"x"},{"node":"x"}])"),
                               call("neg", "torch.ops.aten.neg.default", R"([{"node":"add"}])"),
                               call("mul", "torch.ops.aten.mul.Tensor", R"([{"node":"add"},{"node":"z"}])"),
                               out(R"({"tuple":[{"node":"mul"},{"node":"neg"}]})")}));
  CHECK(find(p2, g_ok).size() == 1);  // same shape without the path back: matches
  auto m2 = SubgraphMatcher::create(p2);
  REQUIRE(m2.is_ok());
  auto why = m2->explain(g);
  REQUIRE(why.size() == 1);
  CHECK(why[0].candidate == g.find("mul"));
  CHECK(why[0].failure.kind == MatchFailure::Kind::Cycle);
  CHECK(why[0].failure.other == g.find("neg"));
  CHECK(m2->explain(g_ok)[0].failure.kind == MatchFailure::Kind::None);
  CHECK(fusion_cycle_through(g, {g.find("add"), g.find("mul")}) == g.find("neg"));
  CHECK(fusion_cycle_through(g, {g.find("add"), g.find("neg")}) == kNoNode);
}

TEST_CASE("matcher: multi-output pattern with an anchor that has no candidate gives no match (FX raises KeyError)") {
  Graph g = graph_of(lines({ph("x"), call("relu", kRelu, R"([{"node":"x"}])"), out(R"({"node":"relu"})")}));
  Graph p =
      graph_of(lines({ph("a"), call("relu", kRelu, R"([{"node":"a"}])"), call("sig", kSigmoid, R"([{"node":"a"}])"),
                      out(R"({"tuple":[{"node":"relu"},{"node":"sig"}]})")}));
  CHECK(find(p, g).empty());
}

TEST_CASE("matcher: match_output and match_placeholder") {
  Graph g = graph_of(lines({ph("x"), call("s1", kSigmoid, R"([{"node":"x"}])"),
                            call("s2", kSigmoid, R"([{"node":"s1"}])"), out(R"({"node":"s2"})")}));
  Graph p = graph_of(lines({ph("a"), call("p1", kSigmoid, R"([{"node":"a"}])"), out(R"({"node":"p1"})")}));
  CHECK(find(p, g).size() == 2);
  auto at_output = find(p, g, MatchOptions{.match_output = true});
  REQUIRE(at_output.size() == 1);
  CHECK(names(g, at_output[0]) == "s2");
  auto at_input = find(p, g, MatchOptions{.match_placeholder = true});
  REQUIRE(at_input.size() == 1);
  CHECK(names(g, at_input[0]) == "s1");
}

TEST_CASE("matcher: ATen arguments spelled differently match through the operator schema") {
  // add(x, y, alpha=1) against add(x, y) with alpha given positionally is impossible (alpha
  // is keyword-only), so: pattern add(a, b) vs graph add(x, y, alpha=2): different spelling,
  // the schema says alpha is present on one side only -> no match; with alpha=2 on both -> match.
  Graph g = graph_of(lines({ph("x"), ph("y"), call("add", kAdd, R"([{"node":"x"},{"node":"y"}])", R"({"alpha":2})"),
                            out(R"({"node":"add"})")}));
  Graph p_plain = graph_of(
      lines({ph("a"), ph("b"), call("add", kAdd, R"([{"node":"a"},{"node":"b"}])"), out(R"({"node":"add"})")}));
  CHECK(find(p_plain, g).empty());
  // self given by keyword in the pattern, positionally in the graph.
  Graph p_kw =
      graph_of(lines({ph("a"), ph("b"), call("add", kAdd, R"([{"node":"a"}])", R"({"other":{"node":"b"},"alpha":2})"),
                      out(R"({"node":"add"})")}));
  CHECK(find(p_kw, g).size() == 1);
}

TEST_CASE("matcher: torch functions spelled differently match once both graphs are normalised") {
  GraphModule g = test::module_of_text(R"(
    x = placeholder
    a = call_function torch.flatten(x, start_dim=1)
    b = call_function torch.flatten(x, 1, -1)
    c = call_function torch.flatten(input=x, end_dim=-1, start_dim=1)
    d = call_function torch.flatten(x, 2)
    t = call_method transpose(x, dim0=0, dim1=1)
    return (a, b, c, d, t)
  )");
  GraphModule flatten = test::module_of_text("p = placeholder\nf = call_function torch.flatten(p, 1)\nreturn f");
  GraphModule transpose = test::module_of_text("p = placeholder\nt = call_method transpose(p, 0, 1)\nreturn t");
  auto found = [&](const Graph& pattern) {
    std::vector<std::string> out;
    for (const SubgraphMatch& m : find(pattern, g.graph)) out.push_back(names(g.graph, m));
    return out;
  };
  // As torch.fx: a plain Python target's arguments compare as spelled.
  CHECK(found(flatten.graph).empty());
  CHECK(found(transpose.graph).empty());
  for (Graph* graph : {&g.graph, &flatten.graph, &transpose.graph}) normalize_arguments(*graph);
  CHECK(found(flatten.graph) == std::vector<std::string>{"a", "b", "c"});
  CHECK(found(transpose.graph) == std::vector<std::string>{"t"});
}

TEST_CASE("matcher: invalid patterns are refused naming the node") {
  Graph dead = graph_of(lines({ph("a"), call("r", kRelu, R"([{"node":"a"}])"), call("s", kSigmoid, R"([{"node":"a"}])"),
                               out(R"({"node":"r"})")}));
  auto m = SubgraphMatcher::create(dead);
  REQUIRE_FALSE(m.is_ok());
  CHECK(m.status().message() == "node 's': the pattern has dead code: nothing uses this node");
  // An unused input is fine (patterns specialise by closing over values).
  Graph unused = graph_of(lines({ph("a"), ph("b"), call("r", kRelu, R"([{"node":"a"}])"), out(R"({"node":"r"})")}));
  REQUIRE(SubgraphMatcher::create(unused).is_ok());
  Graph g = graph_of(lines({ph("x"), call("relu", kRelu, R"([{"node":"x"}])"), out(R"({"node":"relu"})")}));
  auto found = find(unused, g);
  REQUIRE(found.size() == 1);
  CHECK_FALSE(found[0].placeholder_nodes[1].bound());
}

TEST_CASE("matcher: node_name_match lets a node so named stand for an anchor, and for nothing it reaches") {
  // As torch.fx's SubgraphMatcher.match(node_name_match=...): the name widens the anchor's
  // candidates only; the arguments and the nodes reached from the anchor compare as usual.
  Graph g = graph_of(
      lines({ph("x"), call("tan_1", "torch.tanh", R"([{"node":"x"}])"), call("s1", kSigmoid, R"([{"node":"tan_1"}])"),
             call("tan_2", "torch.tanh", R"([{"node":"s1"}])"), out(R"([{"node":"tan_2"}])")}));
  Graph p = graph_of(lines({ph("a"), call("p1", kSigmoid, R"([{"node":"a"}])"),
                            call("p2", kSigmoid, R"([{"node":"p1"}])"), out(R"({"node":"p2"})")}));
  CHECK(find(p, g).empty());
  // tan_2 stands for p2; p1 must still be a sigmoid: s1 is.
  auto named = find(p, g, MatchOptions{.node_name_match = "tan_"});
  REQUIRE(named.size() == 1);
  CHECK(names(g, named[0]) == "tan_2");
  CHECK(g.name(named[0].graph_node(p.find("p1"))) == "s1");
  // Anchored at s1 by name, p1 would have to be tan_1: a tanh, so no match there.
  CHECK(find(p, g, MatchOptions{.node_name_match = "s1"}).empty());
}
