// The module table's transactions: a rollback gives back exactly the table a copy taken at begin
// holds, over generated sequences of nested adds, edits and removals.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "graft/ir/graph_module.hpp"
#include "graft/ir/module_table.hpp"
#include "graft/ir/transaction.hpp"

using namespace graft;

namespace {

/// Everything a table holds, in order, and whether each path finds its own entry.
std::string describe(const ModuleTable& table) {
  std::string out;
  for (const ModuleInfo& m : table.entries()) {
    out += m.path + ":" + m.class_name + ":" + std::to_string(m.parameters.size()) + ":" +
        (m.graph ? std::to_string(m.graph->size()) : std::string("-"));
    const ModuleInfo* found = table.find(m.path);
    out += found == &m ? ";" : "(index broken);";
  }
  return out;
}

ModuleInfo module(const std::string& path, int serial) {
  ModuleInfo m;
  m.path = path;
  m.class_name = "C" + std::to_string(serial);
  if (serial % 3 == 0) {
    m.graph.emplace();
    m.graph->placeholder("x");
  }
  return m;
}

}  // namespace

TEST_CASE("module table: rollback restores the table as a copy at begin has it") {
  for (std::uint32_t seed = 0; seed < 200; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    ModuleTable table;
    REQUIRE(table.add(module("", 0)).is_ok());
    std::vector<std::string> expected;  // describe() at each open transaction's begin
    int serial = 1;
    std::string steps;  // what ran, for a failing seed
    for (int step = 0; step < 60; ++step) {
      const int what = static_cast<int>(rng() % 7);
      if (what == 0 && expected.size() < 4) {
        expected.push_back(describe(table));
        table.begin_nested_transaction();
        steps += "begin ";
      } else if (what == 1 && !expected.empty()) {
        table.commit_transaction();
        expected.pop_back();
        steps += "commit ";
      } else if (what == 2 && !expected.empty()) {
        table.rollback_transaction();
        CHECK_MESSAGE(describe(table) == expected.back(), steps);
        expected.pop_back();
        steps += "rollback ";
      } else if (what == 3) {
        const std::string path = "m" + std::to_string(rng() % 12);
        (void)table.add(module(path, serial++));  // refused when present: no change either way
        steps += "add " + path + " ";
      } else if (what == 4 || what == 5) {
        const std::string path = "m" + std::to_string(rng() % 12);
        if (ModuleInfo* m = table.edit(path)) {
          m->class_name += "'";
          m->parameters.push_back({"w", {2}, "float32"});
          if (m->graph) m->graph->placeholder("y" + std::to_string(step));
        }
        steps += "edit " + path + " ";
      } else if (what == 6) {
        const std::uint32_t salt = rng() % 3;
        table.remove_if([&](const ModuleInfo& m) { return (m.path.size() + m.path.back() + salt) % 3 == 0; });
        steps += "remove ";
      }
    }
    while (!expected.empty()) {
      table.rollback_transaction();
      CHECK_MESSAGE(describe(table) == expected.back(), steps);
      expected.pop_back();
    }
  }
}

TEST_CASE("module table: a copy carries no open transaction") {
  ModuleTable table;
  REQUIRE(table.add(module("", 0)).is_ok());
  table.begin_nested_transaction();
  REQUIRE(table.add(module("a", 1)).is_ok());
  ModuleTable copy = table;
  CHECK(table.in_transaction());
  CHECK_FALSE(copy.in_transaction());
  copy.rollback_transaction();  // nothing open: no change
  CHECK(copy.find("a") != nullptr);
  table.rollback_transaction();
  CHECK(table.find("a") == nullptr);
}

TEST_CASE("Transaction over a GraphModule undoes the graph and its modules together") {
  GraphModule gm;
  gm.graph.output(Argument::node(gm.graph.placeholder("x")));
  REQUIRE(gm.modules.add(module("", 0)).is_ok());
  REQUIRE(gm.modules.add(module("kept", 3)).is_ok());
  const std::string before = describe(gm.modules);
  {
    Transaction t(gm);
    gm.graph.placeholder("y");
    REQUIRE(gm.modules.add(module("new", 1)).is_ok());
    gm.modules.edit("kept")->graph->placeholder("z");
    gm.modules.remove_if([](const ModuleInfo& m) { return m.path == "kept"; });
    // destroyed open: rolls back
  }
  CHECK(describe(gm.modules) == before);
  CHECK(gm.graph.size() == 2);
  CHECK(gm.modules.find("kept")->graph->size() == 1);
  {
    Transaction t(gm);
    REQUIRE(gm.modules.add(module("new", 1)).is_ok());
    t.commit();
  }
  CHECK(gm.modules.find("new") != nullptr);
  CHECK_FALSE(gm.modules.in_transaction());
}
