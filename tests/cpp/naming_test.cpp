// Node naming against a model of FX's rule: every derived name is the first of `hint`,
// `base_N`, `base_N+1`, ... that no live or erased node has had, on generated edit sequences
// with renames, explicit names, retired names and rolled-back transactions.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "graft/ir/graph.hpp"

using namespace graft;

namespace {

/// FX's naming, spelled out with plain containers.
struct NameModel {
  std::set<std::string> live;
  std::vector<std::string> retired;
  std::map<std::string, std::uint32_t> counters;

  bool used(const std::string& name) const {
    return live.count(name) > 0 || std::find(retired.begin(), retired.end(), name) != retired.end();
  }
  static std::pair<std::string, std::uint32_t> split(const std::string& name) {
    const std::size_t us = name.rfind('_');
    if (us == std::string::npos || us == 0 || us + 1 == name.size()) return {name, 0};
    const std::string digits = name.substr(us + 1);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return {name, 0};
    if (digits.size() > 1 && digits[0] == '0') return {name, 0};
    if (digits.size() > 8 || std::stoul(digits) > 0xffffff) return {name, 0};
    return {name.substr(0, us), static_cast<std::uint32_t>(std::stoul(digits))};
  }
  std::string derive(const std::string& hint) {
    if (!used(hint)) return hint;
    auto [base, number] = split(hint);
    std::uint32_t& counter = counters[base];
    counter = std::max(counter, number);
    for (;;) {
      std::string name = base + "_" + std::to_string(++counter);
      if (!used(name)) return name;
    }
  }
};

}  // namespace

TEST_CASE("naming: derived names follow FX's rule through renames, erases, retired names and rollbacks") {
  const std::vector<std::string> hints = {"relu", "relu_3", "add", "add_2", "x_01", "mul_7", "relu_16777300"};
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    auto some_name = [&] {
      const std::string base = pick(2) == 0 ? "relu" : "add";
      return pick(4) == 0 ? base : base + "_" + std::to_string(1 + pick(40));
    };
    Graph g;
    NameModel model;
    std::optional<NameModel> at_begin;
    std::vector<NodeId> nodes;
    for (int step = 0; step < 400; ++step) {
      CAPTURE(step);
      switch (pick(8)) {
        case 0:
        case 1:
        case 2: {  // a derived name
          const std::string& hint = hints[pick(hints.size())];
          const std::string want = model.derive(hint);
          const NodeId n = g.create_node(OpKind::CallFunction, "torch.relu", {}, {}, hint);
          REQUIRE(g.name(n) == want);
          model.live.insert(want);
          nodes.push_back(n);
          break;
        }
        case 3: {  // an explicit name, allowed even if an erased node had it
          const std::string name = some_name();
          Result<NodeId> n = g.create_node_named(OpKind::CallFunction, "torch.relu", {}, {}, name);
          REQUIRE(n.is_ok() == (model.live.count(name) == 0));
          if (n) {
            model.live.insert(name);
            nodes.push_back(n.value());
          }
          break;
        }
        case 4: {  // erase: the name is retired
          std::erase_if(nodes, [&](NodeId n) { return !g.is_alive(n); });
          if (nodes.empty()) break;
          const NodeId n = nodes[pick(nodes.size())];
          model.live.erase(g.name(n));
          model.retired.push_back(g.name(n));
          REQUIRE(g.erase_node(n).is_ok());
          break;
        }
        case 5: {  // rename: the old name is free again
          std::erase_if(nodes, [&](NodeId n) { return !g.is_alive(n); });
          const std::string name = some_name();
          if (nodes.empty() || model.live.count(name) > 0) break;
          const NodeId n = nodes[pick(nodes.size())];
          model.live.erase(g.name(n));
          REQUIRE(g.rename(n, name).is_ok());
          model.live.insert(name);
          break;
        }
        case 6: {  // a name FX used before the conversion
          const std::string name = some_name();
          g.retire_name(name);
          if (model.live.count(name) == 0) model.retired.push_back(name);
          break;
        }
        case 7:  // transactions: open, commit or roll back
          if (!at_begin) {
            REQUIRE(g.begin_transaction().is_ok());
            at_begin = model;
          } else if (pick(2) == 0) {
            g.commit_transaction();
            at_begin.reset();
          } else {
            g.rollback_transaction();
            model = *at_begin;
            at_begin.reset();
          }
          break;
      }
    }
    std::set<std::string> live;
    for (NodeId n : g.nodes()) live.insert(g.name(n));
    CHECK(live == model.live);
  }
}

TEST_CASE("naming: a rollback brings back names the suffix ceiling was built without") {
  SUBCASE("renamed away in the transaction that built the ceiling") {
    Graph g;
    const NodeId a = g.create_node(OpKind::CallFunction, "torch.relu", {}, {}, "relu_5");
    REQUIRE(g.begin_transaction().is_ok());
    REQUIRE(g.rename(a, "foo").is_ok());
    (void)g.create_node(OpKind::CallFunction, "torch.relu", {}, {}, "foo");  // derives a name: builds it
    g.rollback_transaction();
    REQUIRE(g.name(a) == "relu_5");
    (void)g.create_node(OpKind::CallFunction, "torch.relu", {}, {}, "relu_4");
    const NodeId c = g.create_node(OpKind::CallFunction, "torch.relu", {}, {}, "relu_4");
    REQUIRE(c != kNoNode);
    CHECK(g.name(c) == "relu_6");
  }
  SUBCASE("built in a nested transaction that committed into the rolled-back one") {
    Graph g;
    const NodeId a = g.create_node(OpKind::CallFunction, "torch.add", {}, {}, "add_3");
    REQUIRE(g.begin_transaction().is_ok());
    REQUIRE(g.rename(a, "z").is_ok());
    g.begin_nested_transaction();
    (void)g.create_node(OpKind::CallFunction, "torch.relu", {}, {}, "z");
    g.commit_transaction();
    g.rollback_transaction();
    REQUIRE(g.name(a) == "add_3");
    for (const char* want : {"add", "add_1", "add_2"})
      CHECK(g.name(g.create_node(OpKind::CallFunction, "torch.add", {}, {}, "add")) == want);
    CHECK(g.unique_name("add") == "add_4");
  }
}
