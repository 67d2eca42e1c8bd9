// Pattern constraints (graft/match/pattern.hpp): what FX's matcher cannot express, each on a
// small graph where FX's own rule would give a different count.
#include <doctest/doctest.h>

#include "graft/match/describe_failure.hpp"
#include "graft/match/pattern.hpp"
#include "graft/match/subgraph_matcher.hpp"
#include "test_graphs.hpp"

using namespace graft;
using namespace graft::test;

namespace {

constexpr const char* kAdd = "torch.ops.aten.add.Tensor";
constexpr const char* kMul = "torch.ops.aten.mul.Tensor";
constexpr const char* kRelu = "torch.nn.functional.relu";
constexpr const char* kGelu = "torch.nn.functional.gelu";

std::vector<SubgraphMatch> find(Pattern pattern, const Graph& g, const ModuleTable* modules = nullptr) {
  auto m = SubgraphMatcher::create(std::move(pattern), {});
  REQUIRE_MESSAGE(m.is_ok(), m.status().message());
  return m.value().match(g, modules);
}

std::string returned(const Graph& g, const std::vector<SubgraphMatch>& ms) {
  std::string s;
  for (const auto& m : ms)
    for (NodeId n : m.returning_nodes) s += (s.empty() ? "" : ",") + g.name(n);
  return s;
}

// relu(add(a, b)) as a pattern; `add` and `relu` are its nodes.
Pattern add_relu_pattern() {
  return Pattern(graph_of(lines({ph("a"), ph("b"), call("add", kAdd, R"([{"node":"a"},{"node":"b"}])"),
                                 call("relu", kRelu, R"([{"node":"add"}])"), out(R"({"node":"relu"})")})));
}

}  // namespace

TEST_CASE("constraints: alternatives accept any of several targets") {
  Graph g = graph_of(
      lines({ph("x"), ph("y"), call("add", kAdd, R"([{"node":"x"},{"node":"y"}])"),
             call("gelu", kGelu, R"([{"node":"add"}])"), call("add_1", kAdd, R"([{"node":"gelu"},{"node":"y"}])"),
             call("relu", kRelu, R"([{"node":"add_1"}])"), out(R"([{"node":"relu"}])")}));
  Pattern p = add_relu_pattern();
  CHECK(returned(g, find(p, g)) == "relu");  // FX: relu only
  p.constrain(p.graph.find("relu")).alternatives = {kGelu};
  CHECK(returned(g, find(p, g)) == "gelu,relu");
}

TEST_CASE("constraints: an explanation names every target a node accepts") {
  Graph g = graph_of(lines({ph("x"), ph("y"), call("mul", kMul, R"([{"node":"x"},{"node":"y"}])"),
                            call("relu", kRelu, R"([{"node":"mul"}])"), out(R"([{"node":"relu"}])")}));
  Pattern p = add_relu_pattern();
  p.constrain(p.graph.find("add")).alternatives = {"torch.ops.aten.sub.Tensor", "torch.ops.aten.div.Tensor"};
  auto m = SubgraphMatcher::create(p, {});
  REQUIRE(m.is_ok());
  auto why = m.value().explain(g, g.find("relu"));
  REQUIRE(why.size() == 1);
  CHECK(describe_failure(why[0].failure, why[0].candidate, g, m.value()) ==
        "mul is call_function torch.ops.aten.mul.Tensor, the pattern's 'add' is call_function "
        "torch.ops.aten.add.Tensor, torch.ops.aten.sub.Tensor or torch.ops.aten.div.Tensor");
}

TEST_CASE("constraints: commutative operands match either order, backtracking over the choice") {
  // mul(add(x, y), x) against mul(add(p, q), q): only the swapped add binds x consistently.
  Pattern p(graph_of(lines({ph("x"), ph("y"), call("add", kAdd, R"([{"node":"x"},{"node":"y"}])"),
                            call("mul", kMul, R"([{"node":"add"},{"node":"x"}])"), out(R"({"node":"mul"})")})));
  Graph g = graph_of(lines({ph("p"), ph("q"), call("add", kAdd, R"([{"node":"p"},{"node":"q"}])"),
                            call("mul", kMul, R"([{"node":"add"},{"node":"q"}])"), out(R"([{"node":"mul"}])")}));
  CHECK(find(p, g).empty());  // FX: no commutativity
  p.constrain(p.graph.find("add")).commutative = true;
  auto ms = find(p, g);
  REQUIRE(ms.size() == 1);
  CHECK(g.name(ms[0].placeholder_nodes[0].node) == "q");  // x
  CHECK(g.name(ms[0].placeholder_nodes[1].node) == "p");  // y

  // a + relu(b) matches relu(y) + x once `add` is commutative (FX's documented counter-example).
  Pattern q(graph_of(lines({ph("a"), ph("b"), call("relu", kRelu, R"([{"node":"b"}])"),
                            call("add", kAdd, R"([{"node":"a"},{"node":"relu"}])"), out(R"({"node":"add"})")})));
  Graph h = graph_of(lines({ph("x"), ph("y"), call("relu", kRelu, R"([{"node":"y"}])"),
                            call("add", kAdd, R"([{"node":"relu"},{"node":"x"}])"), out(R"([{"node":"add"}])")}));
  CHECK(find(q, h).empty());
  q.constrain(q.graph.find("add")).commutative = true;
  CHECK(find(q, h).size() == 1);
}

TEST_CASE("constraints: users count, as Inductor's _users") {
  // add has two users, relu and relu_1.
  Graph g = graph_of(lines({ph("x"), ph("y"), call("add", kAdd, R"([{"node":"x"},{"node":"y"}])"),
                            call("relu", kRelu, R"([{"node":"add"}])"), call("relu_1", kRelu, R"([{"node":"add"}])"),
                            out(R"([{"node":"relu"},{"node":"relu_1"}])")}));
  Pattern p(graph_of(lines({ph("a"), ph("b"), call("add", kAdd, R"([{"node":"a"},{"node":"b"}])"),
                            call("relu", kRelu, R"([{"node":"add"}])"), out(R"([{"node":"relu"},{"node":"add"}])")})));
  // add is returned, so its outside user may stay; relu_1's match overlaps relu's on add
  CHECK(returned(g, find(p, g)) == "relu,add");
  p.constrain(p.graph.find("add")).users = 1;
  CHECK(find(p, g).empty());
  auto m = SubgraphMatcher::create(p, {});
  REQUIRE(m.is_ok());
  auto why = m.value().explain(g, g.find("relu"));
  REQUIRE(why.size() == 1);
  CHECK(describe_failure(why[0].failure, why[0].candidate, g, m.value()) ==
        "add has 2 users, the pattern's 'add' wants exactly 1");
  CHECK(why[0].failure.matched == 1);  // relu was bound, add was refused
  CHECK(m.value().compute_nodes() == 2);
}

TEST_CASE("constraints: a predicate sees the graph node and its metadata") {
  Graph g = graph_of(
      lines({ph("x"), ph("y"), call("add", kAdd, R"([{"node":"x"},{"node":"y"}])"),
             call("relu", kRelu, R"([{"node":"add"}])"), call("add_1", kAdd, R"([{"node":"relu"},{"node":"y"}])"),
             call("relu_1", kRelu, R"([{"node":"add_1"}])"), out(R"([{"node":"relu_1"}])")}));
  Pattern p = add_relu_pattern();
  NodeConstraint& c = p.constrain(p.graph.find("add"));
  c.predicate = [](const Graph& graph, NodeId n) { return graph.name(n) == "add_1"; };
  c.predicate_name = "is_second";
  CHECK(returned(g, find(p, g)) == "relu_1");
  auto m = SubgraphMatcher::create(p, {});
  REQUIRE(m.is_ok());
  auto why = m.value().explain(g, g.find("relu"));
  CHECK(describe_failure(why[0].failure, why[0].candidate, g, m.value()) ==
        "add: the pattern's 'add' predicate 'is_second' is false for it");
}

TEST_CASE("constraints: a wildcard stands for any argument and is not an input") {
  // transpose(x, <any>, -1): any dim, literal or node.
  Graph g = graph_of(lines({ph("x"), ph("d"), call("t", "torch.transpose", R"([{"node":"x"},-2,-1])"),
                            call("t_1", "torch.transpose", R"([{"node":"t"},{"node":"d"},-1])"),
                            call("t_2", "torch.transpose", R"([{"node":"t_1"},0,1])"), out(R"([{"node":"t_2"}])")}));
  Pattern p(graph_of(lines({ph("a"), ph("any"), call("t", "torch.transpose", R"([{"node":"a"},{"node":"any"},-1])"),
                            out(R"({"node":"t"})")})));
  p.constrain(p.graph.find("any")).wildcard = true;
  auto m = SubgraphMatcher::create(p, {});
  REQUIRE(m.is_ok());
  CHECK(m.value().placeholders().size() == 1);
  auto ms = m.value().match(g);
  CHECK(returned(g, ms) == "t,t_1");
  CHECK(ms[0].placeholder_nodes.size() == 1);
}

TEST_CASE("constraints: optional keyword arguments match whether the graph spells them or not") {
  // A custom op with optional keywords, npu_quant_matmul(x1, x2, scale, *, offset=None,
  // bias=None), called both ways.
  const char* q = "torch.ops.npu.npu_quant_matmul.default";
  Graph g =
      graph_of(lines({ph("a"), ph("b"), ph("s"), ph("o"), ph("bias"),
                      call("m1", q, R"([{"node":"a"},{"node":"b"},{"node":"s"}])",
                           R"({"offset":{"node":"o"},"bias":{"node":"bias"}})"),
                      call("m2", q, R"([{"node":"m1"},{"node":"b"},{"node":"s"}])"),
                      call("m3", q, R"([{"node":"m2"},{"node":"b"},{"node":"s"}])", R"({"bias":{"node":"bias"}})"),
                      out(R"([{"node":"m3"}])")}));
  Pattern p(graph_of(lines({ph("x1"), ph("x2"), ph("scale"), ph("offset"), ph("bias"),
                            call("mm", q, R"([{"node":"x1"},{"node":"x2"},{"node":"scale"}])",
                                 R"({"offset":{"node":"offset"},"bias":{"node":"bias"}})"),
                            out(R"({"node":"mm"})")})));
  CHECK(returned(g, find(p, g)) == "m1");
  p.constrain(p.graph.find("mm")).optional_kwargs = {"offset", "bias"};
  auto ms = find(p, g);
  CHECK(returned(g, ms) == "m1,m2,m3");
  REQUIRE(ms.size() == 3);
  REQUIRE(ms[1].placeholder_nodes[3].literal != nullptr);
  CHECK(*ms[1].placeholder_nodes[3].literal == Argument{});  // offset omitted: None
  CHECK(g.name(ms[2].placeholder_nodes[4].node) == "bias");
}

TEST_CASE("constraints: an optional keyword left out takes its schema default") {
  const char* gelu = "torch.ops.aten.gelu.default";  // gelu(Tensor self, *, str approximate="none")
  Graph g =
      graph_of(lines({ph("x"), call("g1", gelu, R"([{"node":"x"}])"),
                      call("g2", gelu, R"([{"node":"g1"}])", R"({"approximate":"tanh"})"),
                      call("g3", gelu, R"([{"node":"g2"}])", R"({"approximate":"none"})"), out(R"([{"node":"g3"}])")}));
  auto pattern = [&](const char* approximate) {
    Pattern p(graph_of(lines(
        {ph("a"), call("gelu", gelu, R"([{"node":"a"}])", std::string(R"({"approximate":")") + approximate + R"("})"),
         out(R"({"node":"gelu"})")})));
    p.constrain(p.graph.find("gelu")).optional_kwargs = {"approximate"};
    return p;
  };
  CHECK(returned(g, find(pattern("tanh"), g)) == "g2");
  CHECK(returned(g, find(pattern("none"), g)) == "g1,g3");  // g1 leaves it out: the default is "none"
}

TEST_CASE("constraints: keyword arguments compare by name, in any order (docs/FX_DIFFERENCES.md)") {
  Graph g = graph_of(lines(
      {ph("x"), call("s", "torch.sum", R"([{"node":"x"}])", R"({"keepdim":true,"dim":1})"), out(R"([{"node":"s"}])")}));
  Pattern p(graph_of(lines(
      {ph("a"), call("s", "torch.sum", R"([{"node":"a"}])", R"({"dim":1,"keepdim":true})"), out(R"({"node":"s"})")})));
  CHECK(find(p, g).size() == 1);
}

TEST_CASE("constraints: modules by class, built-in and custom, wherever they sit") {
  const std::string modules =
      R"({"path":"","class":"M","parameters":[],"buffers":[]},)"
      R"({"path":"l0","class":"torch.nn.modules.linear.Linear","parameters":[{"name":"weight","shape":[4,4],"dtype":"float32"}],"buffers":[]},)"
      R"({"path":"blocks.1.proj","class":"__main__.CustomLinearModule","parameters":[],"buffers":[]})";
  GraphModule gm = module_of(lines({ph("x"), node("call_module", "l0", "l0", R"([{"node":"x"}])"),
                                    node("call_module", "blocks_1_proj", "blocks.1.proj", R"([{"node":"l0"}])"),
                                    out(R"([{"node":"blocks_1_proj"}])")}),
                             modules);
  Pattern p(
      graph_of(lines({ph("x"), node("call_module", "lin", "lin", R"([{"node":"x"}])"), out(R"({"node":"lin"})")})));
  p.constrain(p.graph.find("lin")).module_class = "torch.nn.Linear";
  CHECK(returned(gm.graph, find(p, gm.graph, &gm.modules)) == "l0");
  p.constrain(p.graph.find("lin")).module_class = "CustomLinearModule";
  CHECK(returned(gm.graph, find(p, gm.graph, &gm.modules)) == "blocks_1_proj");
  // without the graph's module table: no match, and the explanation says why
  CHECK(find(p, gm.graph).empty());

  // several classes: any of them
  p.constrain(p.graph.find("lin")).module_class = "torch.nn.Linear";
  p.constrain(p.graph.find("lin")).other_module_classes = {"CustomLinearModule"};
  CHECK(returned(gm.graph, find(p, gm.graph, &gm.modules)) == "l0,blocks_1_proj");
  CHECK(p.constraint(p.graph.find("lin"))->module_classes_text() == "torch.nn.Linear or CustomLinearModule");

  CHECK(module_class_matches("torch.nn.Linear", "torch.nn.modules.linear.Linear"));
  CHECK(module_class_matches("torch.nn.modules.linear.Linear", "torch.nn.modules.linear.Linear"));
  CHECK(module_class_matches("Linear", "torch.nn.modules.linear.Linear"));
  CHECK_FALSE(module_class_matches("torch.nn.Linear", "torch.nn.modules.linear.NonDynamicallyQuantizableLinear"));
  CHECK_FALSE(module_class_matches("torch.n.Linear", "torch.nn.modules.linear.Linear"));
  CHECK_FALSE(module_class_matches("other.Linear", "torch.nn.modules.linear.Linear"));
}

TEST_CASE("constraints: a pattern exported with its modules matches them by class") {
  const std::string pattern_modules =
      R"({"path":"","class":"P","parameters":[],"buffers":[]},)"
      R"({"path":"proj","class":"torch.nn.modules.linear.Linear","parameters":[],"buffers":[]})";
  GraphModule pm = module_of(lines({ph("x"), node("call_module", "proj", "proj", R"([{"node":"x"}])"),
                                    call("relu", kRelu, R"([{"node":"proj"}])"), out(R"({"node":"relu"})")}),
                             pattern_modules);
  const std::string graph_modules =
      R"({"path":"","class":"M","parameters":[],"buffers":[]},)"
      R"({"path":"encoder.fc","class":"torch.nn.modules.linear.Linear","parameters":[],"buffers":[]})";
  GraphModule gm = module_of(lines({ph("x"), node("call_module", "encoder_fc", "encoder.fc", R"([{"node":"x"}])"),
                                    call("relu", kRelu, R"([{"node":"encoder_fc"}])"), out(R"([{"node":"relu"}])")}),
                             graph_modules);
  Pattern p(std::move(pm.graph));
  p.modules = std::move(pm.modules);
  CHECK(find(p, gm.graph, &gm.modules).empty());  // FX: by path, `proj` is not `encoder.fc`
  p.match_modules_by_class();
  CHECK(returned(gm.graph, find(p, gm.graph, &gm.modules)) == "relu");
}

TEST_CASE("constraints: match_at finds the match anchored at one node") {
  Graph g = graph_of(
      lines({ph("x"), ph("y"), call("add", kAdd, R"([{"node":"x"},{"node":"y"}])"),
             call("relu", kRelu, R"([{"node":"add"}])"), call("add_1", kAdd, R"([{"node":"relu"},{"node":"y"}])"),
             call("relu_1", kRelu, R"([{"node":"add_1"}])"), out(R"([{"node":"relu_1"}])")}));
  auto m = SubgraphMatcher::create(add_relu_pattern(), {});
  REQUIRE(m.is_ok());
  CandidateIndex index(g);
  auto at = m.value().match_at(index, g.find("relu_1"));
  REQUIRE(at.has_value());
  CHECK(g.name(at->placeholder_nodes[0].node) == "relu");
  CHECK_FALSE(m.value().match_at(index, g.find("add")).has_value());
}

TEST_CASE("constraints: bad constraints are refused when the matcher is built") {
  Pattern p = add_relu_pattern();
  p.constrain(p.graph.find("add")).wildcard = true;
  auto m = SubgraphMatcher::create(p, {});
  REQUIRE_FALSE(m.is_ok());
  CHECK(m.status().message().find("only a pattern input can be a wildcard") != std::string::npos);
  Pattern q = add_relu_pattern();
  q.constrain(q.graph.find("relu")).module_class = "torch.nn.ReLU";
  CHECK_FALSE(SubgraphMatcher::create(q, {}).is_ok());
}
