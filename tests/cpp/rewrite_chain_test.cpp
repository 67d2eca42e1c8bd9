// Back-to-back matches: each replacement's input is the node the previous one created. A map of
// replaced nodes keyed by slot once followed a reused slot to the wrong node (exp(exp(x)) for
// three sigmoids), so every way of rewriting is checked on chains of 2 to 10 against the
// graph torch.fx's replace_pattern gives (checked in PyTorch 2.14: exp, exp_1, ... each on the
// one before).
#include <doctest/doctest.h>

#include <string>

#include "graft/io/graph_json.hpp"
#include "graft/rewrite/replace_pattern.hpp"
#include "graft/rewrite/rule_set.hpp"
#include "test_graphs.hpp"

using namespace graft;
using namespace graft::test;

namespace {

std::string node_ref(const std::string& name) { return R"({"node":")" + name + R"("})"; }

/// x -> f -> f -> ... (n calls of `target`, named base, base_1, ...) -> output.
std::string chain_lines(const char* target, const std::string& base, int n) {
  std::string nodes = ph("x");
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    const std::string name = i == 0 ? base : base + "_" + std::to_string(i);
    nodes += ",\n" + call(name.c_str(), target, "[" + node_ref(prev) + "]");
    prev = name;
  }
  return nodes + ",\n" + out(node_ref(prev));
}

std::string text(const GraphModule& gm) {
  Result<std::string> r = to_graph_json(gm);
  REQUIRE_MESSAGE(r.is_ok(), r.status().message());
  return r.value();
}

Graph unary(const char* target) {
  return graph_of(lines({ph("x"), call("y", target, "[" + node_ref("x") + "]"), out(node_ref("y"))}));
}

Rule exp_rule() {
  Rule r;
  r.name = "sigmoid_to_exp";
  r.matcher = std::make_shared<const SubgraphMatcher>(SubgraphMatcher::create(unary("torch.sigmoid")).value());
  r.replacement = std::make_shared<const Graph>(
      graph_of(lines({ph("x"), call("exp", "torch.exp", "[" + node_ref("x") + "]"), out(node_ref("exp"))})));
  r.meta = MetaPolicy::Drop;
  return r;
}

}  // namespace

TEST_CASE("rewrite chains: every back-to-back replacement reads the one before it, 2 to 10 long") {
  const Graph replacement =
      graph_of(lines({ph("x"), call("exp", "torch.exp", "[" + node_ref("x") + "]"), out(node_ref("exp"))}));
  for (int n = 2; n <= 10; ++n) {
    CAPTURE(n);
    const std::string expected = text(module_of(chain_lines("torch.exp", "exp", n)));
    SUBCASE("replace_pattern") {
      GraphModule gm = module_of(chain_lines("torch.sigmoid", "sigmoid", n));
      auto done = replace_pattern(gm.graph, unary("torch.sigmoid"), replacement);
      REQUIRE_MESSAGE(done.is_ok(), done.status().message());
      CHECK(done->size() == static_cast<std::size_t>(n));
      CHECK(text(gm) == expected);
      // torch.fx reports an input bound to a replaced node by its replacement.
      for (int i = 1; i < n; ++i) {
        const auto& names = done->at(i).matched_names;
        REQUIRE(names.size() == 2);
        CHECK(names[0] == std::pair<std::string, std::string>{"x", i == 1 ? "exp" : "exp_" + std::to_string(i - 1)});
      }
    }
    SUBCASE("rule set, once and to a fixed point") {
      for (DriveMode mode : {DriveMode::Once, DriveMode::Fixpoint}) {
        GraphModule gm = module_of(chain_lines("torch.sigmoid", "sigmoid", n));
        DriveOptions o;
        o.mode = mode;
        auto report = apply_rules(gm.graph, {exp_rule()}, o);
        REQUIRE_MESSAGE(report.is_ok(), report.status().message());
        CHECK(report->rewrites == static_cast<std::size_t>(n));
        CHECK(text(gm) == expected);
      }
    }
  }
}

TEST_CASE("rewrite chains: two-node patterns back to back, with an identity replacement between") {
  // sigmoid(sigmoid(a)) -> tanh(a) on 2k sigmoids gives k tanh in a row.
  const Graph pattern = graph_of(lines({ph("a"), call("s1", "torch.sigmoid", "[" + node_ref("a") + "]"),
                                        call("s2", "torch.sigmoid", "[" + node_ref("s1") + "]"), out(node_ref("s2"))}));
  const Graph tanh =
      graph_of(lines({ph("a"), call("tanh", "torch.tanh", "[" + node_ref("a") + "]"), out(node_ref("tanh"))}));
  const Graph identity = graph_of(lines({ph("a"), out(node_ref("a"))}));
  for (int k = 1; k <= 5; ++k) {
    CAPTURE(k);
    GraphModule gm = module_of(chain_lines("torch.sigmoid", "sigmoid", 2 * k));
    auto done = replace_pattern(gm.graph, pattern, tanh);
    REQUIRE(done.is_ok());
    CHECK(text(gm) == text(module_of(chain_lines("torch.tanh", "tanh", k))));
    GraphModule gone = module_of(chain_lines("torch.sigmoid", "sigmoid", 2 * k));
    REQUIRE(replace_pattern(gone.graph, pattern, identity).is_ok());
    CHECK(text(gone) == text(module_of(lines({ph("x"), out(node_ref("x"))}))));
  }
}

TEST_CASE("rewrite chains: rewrite_match refuses to run outside a transaction") {
  GraphModule gm = module_of(chain_lines("torch.sigmoid", "sigmoid", 2));
  auto matcher = SubgraphMatcher::create(unary("torch.sigmoid")).value();
  const auto matches = matcher.match(gm.graph);
  REQUIRE(matches.size() == 2);
  ReplacedValues replaced;
  ReplacedPattern r;
  Status s = rewrite_match(gm.graph, matcher, matches[0], unary("torch.exp"), replaced, r);
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.message() == "rewrite_match: open a transaction on the graph first");
  CHECK(text(gm) == text(module_of(chain_lines("torch.sigmoid", "sigmoid", 2))));
}

TEST_CASE("rewrite chains: a pattern that returns one of its inputs, replaced by the same, ends") {
  // Pattern and replacement (relu(a), b): each match maps its `b` to itself. That once entered
  // the replaced-values map as b -> b, and the next match's lookup looped forever (found by
  // tests/fuzz/lua_api_fuzz). torch.fx 2.14 returns a graph that reads relu_2 before defining it (its
  // lint fails; 1.13 raised an AssertionError).
  const std::string relu_and_b = lines({ph("a"), ph("b"), call("relu", "torch.relu", "[" + node_ref("a") + "]"),
                                        out(R"([{"node":"relu"},{"node":"b"}])")});
  const Graph pattern = graph_of(relu_and_b);
  GraphModule gm = module_of(
      lines({ph("x"), ph("y"), call("relu", "torch.relu", "[" + node_ref("x") + "]"),
             call("relu_1", "torch.relu", "[" + node_ref("relu") + "]"), out(R"([{"node":"relu_1"},{"node":"y"}])")}));
  const std::string before = text(gm);
  auto done = replace_pattern(gm.graph, pattern, graph_of(relu_and_b));
  // The second match's copy would go before the first match's new relu it reads: refused, and
  // the whole rewrite undone (it once left that graph in place and reported success).
  REQUIRE_FALSE(done.is_ok());
  CHECK(done.status().message() ==
        "node 'relu_3': the replacement would read 'relu_2' before it is defined (the match's inputs come after "
        "the nodes it returns)");
  CHECK(text(gm) == before);
}
