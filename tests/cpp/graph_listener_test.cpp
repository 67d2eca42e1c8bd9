// GraphListener: which events each edit sends, in which order, to whom; ListenerScope; copies.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "graft/io/graph_text.hpp"
#include "graft/ir/graph.hpp"
#include "graft/match/candidate_index.hpp"
#include "graft/match/pattern.hpp"
#include "graft/passes/topological_sort.hpp"

using namespace graft;

namespace {

/// Writes each event as `kind name`, so a test reads as the sequence it expects.
struct Recorder : GraphListener {
  std::vector<std::string> events;
  bool with_changing = false;
  void node_changing(const Graph& g, NodeId n) override {
    if (with_changing) events.push_back("changing " + (g.is_alive(n) ? g.name(n) : "#" + std::to_string(n)));
  }
  void node_inserted(const Graph& g, NodeId n) override { events.push_back("inserted " + g.name(n)); }
  void node_erasing(const Graph& g, NodeId n) override { events.push_back("erasing " + g.name(n)); }
  void node_moved(const Graph& g, NodeId n) override { events.push_back("moved " + g.name(n)); }
  void graph_reordered(const Graph& /*g*/) override { events.push_back("reordered"); }
};

Graph chain() {
  Result<Graph> g = parse_graph_text(R"(x = placeholder
relu = call_function torch.relu(x)
sigmoid = call_function torch.sigmoid(relu)
return sigmoid
)");
  REQUIRE_MESSAGE(g.is_ok(), g.status().message());
  return std::move(g).value();
}

}  // namespace

TEST_CASE("graph listener: each edit sends its event, in order, while the scope is open") {
  Graph g = chain();
  Recorder r;
  const NodeId x = g.find("x"), relu = g.find("relu"), sigmoid = g.find("sigmoid");
  {
    ListenerScope listening(g, r);
    g.set_insert_point(g.after(relu));
    const NodeId tanh = g.create_node(OpKind::CallFunction, "torch.tanh", {Argument::node(relu)});
    REQUIRE(g.set_args(sigmoid, {Argument::node(tanh)}).is_ok());  // storage only: no event here
    REQUIRE(g.move_before(tanh, relu).is_ok());  // moves are not checked against uses
    g.set_insert_point(InsertPoint::at_end());
    const NodeId neg = g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(x)});
    REQUIRE(g.erase_node(neg).is_ok());
    REQUIRE(stable_topological_sort(g).is_ok());  // tanh reads relu: it goes back after it
  }
  CHECK(r.events ==
        std::vector<std::string>{"inserted tanh", "moved tanh", "inserted neg", "erasing neg", "reordered"});
  g.create_node(OpKind::CallFunction, "torch.exp", {Argument::node(x)});
  CHECK(r.events.size() == 5);  // the scope closed: nothing more
}

TEST_CASE("graph listener: node_changing comes before the change, for every node whose storage changes") {
  Graph g = chain();
  struct Before : GraphListener {
    std::vector<std::string> seen;
    void node_changing(const Graph& g, NodeId n) override {
      seen.push_back(g.name(n) +
                     (g.op(n) == OpKind::CallFunction
                          ? " args=" + std::to_string(g.args(n).size()) + " first=" + g.name(g.args(n)[0].node_id())
                          : ""));
    }
  } before;
  ListenerScope listening(g, before);
  const NodeId x = g.find("x"), sigmoid = g.find("sigmoid");
  REQUIRE(g.set_args(sigmoid, {Argument::node(x), Argument(2)}).is_ok());
  // sigmoid before its args change; relu and x because their use lists change. Not the output.
  CHECK(std::find(before.seen.begin(), before.seen.end(), "sigmoid args=1 first=relu") != before.seen.end());
  for (const std::string& s : before.seen) CHECK((s.rfind("sigmoid", 0) == 0 || s.rfind("relu", 0) == 0 || s == "x"));
  CHECK(std::find_if(before.seen.begin(), before.seen.end(), [](auto& s) { return s.rfind("relu", 0) == 0; }) !=
        before.seen.end());
  CHECK(std::find(before.seen.begin(), before.seen.end(), "x") != before.seen.end());
}

TEST_CASE("graph listener: a rollback says the order was rebuilt, a copy of the graph has no listeners") {
  Graph g = chain();
  Recorder r;
  ListenerScope listening(g, r);
  REQUIRE(g.begin_transaction().is_ok());
  g.set_insert_point(InsertPoint::at_end());
  g.create_node(OpKind::CallFunction, "torch.neg", {Argument::node(g.find("x"))});
  g.rollback_transaction();
  CHECK(r.events == std::vector<std::string>{"inserted neg", "reordered"});
  CHECK(g.find("neg") == kNoNode);
  Graph copy = g;
  copy.create_node(OpKind::CallFunction, "torch.exp", {Argument::node(copy.find("x"))});
  CHECK(r.events.size() == 2);
}

TEST_CASE("graph listener: a listening candidate index finds the nodes created after it was built") {
  Graph g = chain();
  Result<Graph> pattern = parse_graph_text("a = placeholder\nt = call_function torch.tanh(a)\nreturn t\n");
  REQUIRE(pattern.is_ok());
  const NodeId t = pattern->find("t");
  CandidateIndex index(g);
  CHECK(index.find(*pattern, t, nullptr).empty());
  {
    ListenerScope listening(g, index);
    const NodeId tanh = g.create_node(OpKind::CallFunction, "torch.tanh", {Argument::node(g.find("relu"))});
    CHECK(index.find(*pattern, t, nullptr) == std::vector<NodeId>{tanh});
  }
  g.create_node(OpKind::CallFunction, "torch.tanh", {Argument::node(g.find("x"))});
  CHECK(index.find(*pattern, t, nullptr).size() == 1);  // no longer listening
}
