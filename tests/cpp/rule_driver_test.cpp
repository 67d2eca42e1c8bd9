// Rule sets and the driver (graft/rewrite/rule_set.hpp): once vs fixed point, priorities,
// enable/disable, limits, cycles named, errors that leave the graph unchanged, modules by class.
#include <doctest/doctest.h>

#include "graft/io/graph_json.hpp"
#include "graft/io/graph_text.hpp"
#include "graft/ir/lint.hpp"
#include "graft/rewrite/rule_set.hpp"
#include "test_graphs.hpp"

using namespace graft;
using namespace graft::test;

namespace {

constexpr const char* kRelu = "torch.relu";
constexpr const char* kGelu = "torch.nn.functional.gelu";

std::shared_ptr<const SubgraphMatcher> matcher_of(Pattern p) {
  auto m = SubgraphMatcher::create(std::move(p), {});
  REQUIRE_MESSAGE(m.is_ok(), m.status().message());
  return std::make_shared<const SubgraphMatcher>(std::move(m).value());
}

/// f(x) for one call_function target.
Graph unary(const char* target) {
  return graph_of(lines({ph("x"), call("y", target, R"([{"node":"x"}])"), out(R"({"node":"y"})")}));
}
Graph twice(const char* target) {
  return graph_of(lines({ph("x"), call("y", target, R"([{"node":"x"}])"), call("z", target, R"([{"node":"y"}])"),
                         out(R"({"node":"z"})")}));
}
Rule rule(std::string name, Graph pattern, Graph replacement, int priority = 0) {
  Rule r;
  r.name = std::move(name);
  r.matcher = matcher_of(Pattern(std::move(pattern)));
  r.replacement = std::make_shared<const Graph>(std::move(replacement));
  r.priority = priority;
  return r;
}

/// x -> relu -> relu -> ... (n times) -> output
GraphModule relu_chain(int n) {
  std::string nodes = ph("x");
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    const std::string name = "r" + std::to_string(i);
    nodes += ",\n" + call(name.c_str(), kRelu, R"([{"node":")" + prev + R"("}])");
    prev = name;
  }
  nodes += ",\n" + out(R"([{"node":")" + prev + R"("}])");
  return module_of(nodes);
}

std::string text(const GraphModule& gm) {
  Result<std::string> r = to_graph_json(gm);
  REQUIRE(r.is_ok());
  return r.value();
}

}  // namespace

TEST_CASE("rules: once finds all matches first (FX), a fixed point keeps going") {
  std::vector<Rule> rules{rule("collapse", twice(kRelu), unary(kRelu))};
  GraphModule a = relu_chain(5);
  DriveOptions once;
  once.mode = DriveMode::Once;
  auto r = apply_rules(a.graph, rules, once);
  REQUIRE(r.is_ok());
  CHECK(r->rewrites == 2);  // (r0 r1) and (r2 r3); overlaps removed
  CHECK(r->stop == StopReason::Completed);
  CHECK(r->stop_text(once) == "completed");
  // The replacement's node is `y` (taken after the first rewrite: `y_1`); each goes before the
  // first user of what it replaces, and the second match's input follows the first replacement.
  CHECK(to_graph_text(a.graph) == R"(x = placeholder
y = call_function torch.relu(x)
y_1 = call_function torch.relu(y)
r4 = call_function torch.relu(y_1)
return [r4]
)");
  CHECK(lint(a.graph).is_ok());

  GraphModule b = relu_chain(5);
  auto f = apply_rules(b.graph, rules);
  REQUIRE(f.is_ok());
  CHECK(to_graph_text(b.graph) == "x = placeholder\ny_3 = call_function torch.relu(x)\nreturn [y_3]\n");
  CHECK(f->rewrites == 4);
  CHECK(f->stop == StopReason::Converged);
  CHECK(f->rules[0].rewrites == 4);
  CHECK(lint(b.graph).is_ok());
}

TEST_CASE("rules: the higher priority wins a node, disabled rules never fire") {
  std::vector<Rule> rules{rule("to_gelu", unary(kRelu), unary(kGelu), 1),
                          rule("to_sigmoid", unary(kRelu), unary("torch.sigmoid"), 5)};
  GraphModule a = relu_chain(2);
  auto r = apply_rules(a.graph, rules);
  REQUIRE(r.is_ok());
  CHECK(to_graph_text(a.graph) ==
        "x = placeholder\ny = call_function torch.sigmoid(x)\ny_1 = call_function torch.sigmoid(y)\nreturn [y_1]\n");
  CHECK(r->rules[0].rewrites == 0);
  CHECK(r->rules[1].rewrites == 2);

  rules[1].enabled = false;
  GraphModule b = relu_chain(2);
  REQUIRE(apply_rules(b.graph, rules).is_ok());
  CHECK(to_graph_text(b.graph) ==
        "x = placeholder\ny = call_function torch.nn.functional.gelu(x)\n"
        "y_1 = call_function torch.nn.functional.gelu(y)\nreturn [y_1]\n");
}

TEST_CASE("rules: a fixed point's new nodes take the slots of the nodes it erased") {
  // Five rules that feed each other: every relu is rewritten five times. The graph's slots
  // follow its size, not the number of rewrites (memory charged to a script's budget): the
  // first rewrite of each node takes a new slot (the erased one is the undo record), the four
  // after it reuse the slots of the nodes rewritten before (1,203 slots without reuse).
  const char* targets[] = {kRelu, kGelu, "torch.sigmoid", "torch.tanh", "torch.neg", "torch.abs"};
  std::vector<Rule> rules;
  rules.reserve(5);
  for (int i = 0; i < 5; ++i)
    rules.push_back(rule("step" + std::to_string(i), unary(targets[i]), unary(targets[i + 1])));
  GraphModule gm = relu_chain(200);
  const std::string before = text(gm);
  const std::size_t slots = gm.graph.num_slots();
  auto r = apply_rules(gm.graph, rules);
  REQUIRE(r.is_ok());
  CHECK(r->rewrites == 1000);
  CHECK(r->stop == StopReason::Converged);
  CHECK(gm.graph.num_slots() <= 2 * slots);
  std::size_t abs = 0;
  for (NodeId n : gm.graph.nodes()) abs += gm.graph.target(n) == "torch.abs" ? 1 : 0;
  CHECK(abs == 200);
  CHECK(lint(gm.graph).is_ok());
  // Cut short, the run is undone: the reused slots go with it.
  GraphModule cut = relu_chain(200);
  DriveOptions limited;
  limited.max_rewrites = 777;
  limited.partial = false;
  auto c = apply_rules(cut.graph, rules, limited);
  CHECK_FALSE(c.is_ok());
  CHECK(text(cut) == before);
  CHECK(lint(cut.graph).is_ok());
}

TEST_CASE("rules: rules that undo each other stop the run and are named") {
  std::vector<Rule> rules{rule("relu_to_gelu", unary(kRelu), unary(kGelu)),
                          rule("gelu_to_relu", unary(kGelu), unary(kRelu))};
  GraphModule a = relu_chain(1);
  auto r = apply_rules(a.graph, rules);
  REQUIRE(r.is_ok());
  CHECK(r->stop == StopReason::Cycle);
  CHECK(r->cycle == std::vector<std::string>{"relu_to_gelu", "gelu_to_relu"});
  CHECK(r->stop_text({}).find("cycle: relu_to_gelu -> gelu_to_relu -> relu_to_gelu") == 0);
  CHECK(lint(a.graph).is_ok());

  // Two separate relus of the same input are two places, not a cycle.
  GraphModule b = module_of(lines({ph("x"), call("r0", kRelu, R"([{"node":"x"}])"),
                                   call("r1", kRelu, R"([{"node":"x"}])"), out(R"([{"node":"r0"},{"node":"r1"}])")}));
  std::vector<Rule> one{rule("relu_to_gelu", unary(kRelu), unary(kGelu))};
  auto s = apply_rules(b.graph, one);
  REQUIRE(s.is_ok());
  CHECK(s->stop == StopReason::Converged);
  CHECK(to_graph_text(b.graph) ==
        "x = placeholder\ny = call_function torch.nn.functional.gelu(x)\n"
        "y_1 = call_function torch.nn.functional.gelu(x)\nreturn [y, y_1]\n");
}

TEST_CASE("rules: limits on rewrites and sweeps are the reason the run stopped") {
  std::vector<Rule> rules{rule("collapse", twice(kRelu), unary(kRelu))};
  GraphModule a = relu_chain(6);
  DriveOptions o;
  o.max_rewrites = 2;
  auto r = apply_rules(a.graph, rules, o);
  REQUIRE(r.is_ok());
  CHECK(r->stop == StopReason::RewriteLimit);
  CHECK(r->rewrites == 2);
  CHECK(to_graph_text(a.graph) == R"(x = placeholder
y_1 = call_function torch.relu(x)
r3 = call_function torch.relu(y_1)
r4 = call_function torch.relu(r3)
r5 = call_function torch.relu(r4)
return [r5]
)");
  CHECK(r->stop_text(o) == "rewrite limit (2)");

  GraphModule b = relu_chain(6);
  DriveOptions one_sweep;
  one_sweep.max_sweeps = 1;
  auto s = apply_rules(b.graph, rules, one_sweep);
  REQUIRE(s.is_ok());
  CHECK(s->stop == StopReason::SweepLimit);  // the sweep changed the graph; no second one to confirm
}

TEST_CASE("rules: a run cut short is an error and undone unless partial results are asked for") {
  std::vector<Rule> rules{rule("collapse", twice(kRelu), unary(kRelu))};
  GraphModule a = relu_chain(6);
  const std::string before = text(a);
  DriveOptions o;
  o.max_rewrites = 2;
  o.partial = false;
  auto r = apply_rules(a.graph, rules, o);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().message() ==
        "stopped at the rewrite limit (2) after 2 rewrites (by collapse), before the rules converged; raise "
        "max_rewrites / max_sweeps, or pass partial = true to keep what a limited run does");
  CHECK(text(a) == before);
  o.max_rewrites = 0;  // the default: 10 per node, at least 1,000,000
  auto done = apply_rules(a.graph, rules, o);
  REQUIRE(done.is_ok());
  CHECK(done->stop == StopReason::Converged);
  CHECK(done->rewrite_limit == 1'000'000);
  CHECK(default_rewrite_limit(10) == 1'000'000);
  CHECK(default_rewrite_limit(500'000) == 5'000'000);
}

TEST_CASE("rules: a failing replacement leaves the graph exactly as it was, naming rule and node") {
  GraphModule a = relu_chain(3);
  const std::string before = text(a);
  Rule bad;
  bad.name = "broken";
  bad.matcher = matcher_of(Pattern(unary(kRelu)));
  int calls = 0;
  bad.build = [&](const Graph&, const SubgraphMatch&) -> Result<Graph> {
    if (++calls == 2) return Status::error("no replacement for this one");
    return unary(kGelu);
  };
  auto r = apply_rules(a.graph, {bad});
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().message() == "rule 'broken' at r1: no replacement for this one");
  CHECK(text(a) == before);

  // An interrupt (a script error, a budget) does the same.
  GraphModule b = relu_chain(3);
  DriveOptions o;
  o.interrupt = [] { return Status::error("instruction budget exceeded"); };
  auto s = apply_rules(b.graph, {rule("to_gelu", unary(kRelu), unary(kGelu))}, o);
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.status().message() == "rule 'to_gelu' at r0: instruction budget exceeded");
  CHECK(text(b) == text(relu_chain(3)));
}

TEST_CASE("rules: a replacement using an input the pattern never binds is refused before anything runs") {
  Graph pattern =
      graph_of(lines({ph("x"), ph("unused"), call("y", kRelu, R"([{"node":"x"}])"), out(R"({"node":"y"})")}));
  Graph replacement = graph_of(lines(
      {ph("x"), ph("unused"), call("y", "torch.add", R"([{"node":"x"},{"node":"unused"}])"), out(R"({"node":"y"})")}));
  GraphModule a = relu_chain(1);
  auto r = apply_rules(a.graph, {rule("uses_unbound", std::move(pattern), std::move(replacement))});
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().message() ==
        "rule 'uses_unbound': the replacement uses input 'unused', which the pattern never uses, so no match binds it");
  std::vector<Rule> twin{rule("same", unary(kRelu), unary(kGelu)), rule("same", unary(kGelu), unary(kRelu))};
  CHECK(apply_rules(a.graph, twin).status().message() == "two rules are named 'same'");
}

TEST_CASE("rules: a module matched by class is reachable from the replacement by the pattern's name for it") {
  const std::string modules =
      R"({"path":"","class":"M","parameters":[],"buffers":[]},)"
      R"({"path":"layers.0.l0","class":"__main__.CustomLinearModule","parameters":[{"name":"weight","shape":[4,4],"dtype":"float32"}],"buffers":[]})";
  GraphModule gm = module_of(lines({ph("x"), node("call_module", "layers_0_l0", "layers.0.l0", R"([{"node":"x"}])"),
                                    out(R"([{"node":"layers_0_l0"}])")}),
                             modules);
  Pattern p(graph_of(lines({ph("x"), node("call_module", "l0", "l0", R"([{"node":"x"}])"), out(R"({"node":"l0"})")})));
  p.constrain(p.graph.find("l0")).module_class = "CustomLinearModule";
  Rule r;
  r.name = "linear_to_function";
  r.matcher = matcher_of(std::move(p));
  r.replacement = std::make_shared<const Graph>(graph_of(
      lines({ph("x"), node("get_attr", "w", "l0.weight", "[]"),
             call("y", "torch.nn.functional.linear", R"([{"node":"x"},{"node":"w"}])"), out(R"({"node":"y"})")})));
  auto done = apply_rules(gm, {r});  // the graph module's table: class matches see its modules
  REQUIRE_MESSAGE(done.is_ok(), done.status().message());
  CHECK(done->rewrites == 1);
  const NodeId w = gm.graph.find("w");
  REQUIRE(w != kNoNode);
  CHECK(gm.graph.target(w) == "layers.0.l0.weight");
  CHECK(lint(gm).is_ok());
}

TEST_CASE("rules: the log says what the matcher decided") {
  std::vector<std::string> lines_seen;
  DriveOptions o;
  o.log = [&](const std::string& l) { lines_seen.push_back(l); };
  GraphModule a =
      module_of(lines({ph("x"), call("r0", kRelu, R"([{"node":"x"}])"), call("r1", kRelu, R"([{"node":"r0"}])"),
                       call("s", "torch.sigmoid", R"([{"node":"r0"}])"), out(R"([{"node":"r1"},{"node":"s"}])")}));
  auto r = apply_rules(a.graph, {rule("collapse", twice(kRelu), unary(kRelu))}, o);
  REQUIRE(r.is_ok());
  CHECK(r->rewrites == 0);
  bool said_why = false;
  for (const auto& l : lines_seen)
    said_why = said_why || l == "rule collapse at r1: no match: r0 is used by s outside the match";
  CHECK(said_why);
}
