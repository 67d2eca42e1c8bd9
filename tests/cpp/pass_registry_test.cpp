// The pass registry: one entry per pass, found by name, options checked, reports built.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "graft/io/graph_text.hpp"
#include "graft/passes/pass_registry.hpp"
#include "test_graphs.hpp"

namespace graft {
namespace {

TEST_CASE("pass registry: names and methods are unique, each pass documented and runnable") {
  std::set<std::string_view> names, methods;
  for (const PassInfo* p : pass_registry()) {
    CAPTURE(p->name);
    CHECK(names.insert(p->name).second);
    if (!p->method.empty()) CHECK(methods.insert(p->method).second);
    CHECK(!p->summary.empty());
    CHECK(!p->report.empty());
    CHECK((p->run != nullptr));
    CHECK(find_pass(p->name) == p);
    for (const PassOption& o : p->options) {
      CAPTURE(o.name);
      if (o.choices.empty()) CHECK((o.fallback == "true" || o.fallback == "false"));
      else CHECK(std::find(o.choices.begin(), o.choices.end(), o.fallback) != o.choices.end());
    }
  }
  CHECK(names.size() >= 8);
  CHECK(find_pass("dce") == nullptr);
  CHECK(pass_names().starts_with("dead_code_elimination, common_subexpression_elimination, "));
}

TEST_CASE("pass registry: every pass runs on a small graph and leaves it valid") {
  for (const PassInfo* p : pass_registry()) {
    CAPTURE(p->name);
    GraphModule gm = test::module_of_text(R"(
      x = placeholder
      relu = call_function torch.relu(x)
      relu_1 = call_function torch.relu(x)
      add_ = call_method add_(x, 1)
      dead = call_function torch.neg(x)
      add = call_function _operator.add(relu, relu_1)
      return add
    )");
    PassContext context{.target = GraphModuleRef::graph_only(gm.graph, &gm.modules),
                        .schemas = OpSchemaRegistry::builtin()};
    Result<ReportValue> report = run_pass(*p, context);
    REQUIRE(report);
    CHECK(find_pass("lint")->run(context, {}));
  }
}

TEST_CASE("pass registry: reports hold what the pass did") {
  GraphModule gm = test::module_of_text(R"(
    x = placeholder
    relu = call_function torch.relu(x)
    relu_1 = call_function torch.relu(x)
    dead = call_function torch.neg(x)
    add = call_function _operator.add(relu, relu_1)
    return add
  )");
  PassContext context{.target = GraphModuleRef::graph_only(gm.graph, &gm.modules),
                      .schemas = OpSchemaRegistry::builtin()};
  Result<ReportValue> cse = run_pass(*find_pass("common_subexpression_elimination"), context);
  REQUIRE(cse);
  CHECK(cse->kind == ReportValue::Kind::Int);
  CHECK(cse->number == 1);
  Result<ReportValue> dce = run_pass(*find_pass("dead_code_elimination"), context);
  REQUIRE(dce);
  CHECK(dce->number == 1);
  CHECK(to_graph_text(gm.graph) ==
        "x = placeholder\n"
        "relu = call_function torch.relu(x)\n"
        "add = call_function _operator.add(relu, relu)\n"
        "return add\n");
  Result<ReportValue> sort = run_pass(*find_pass("stable_topological_sort"), context);
  REQUIRE(sort);
  CHECK(sort->kind == ReportValue::Kind::Nil);
}

TEST_CASE("pass registry: options are checked against the declaration") {
  const PassInfo& normalize = *find_pass("normalize_args");
  PassOptions options;
  options.set("defaults", std::string("drop"));
  options.set("keywords", true);
  CHECK(check_options(normalize, options, "here"));
  CHECK(options.word("defaults", "explicit") == "drop");
  CHECK(options.flag("keywords", false));
  CHECK(options.flag("methods", true));  // not given: the default

  PassOptions unknown;
  unknown.set("colour", true);
  CHECK(check_options(normalize, unknown, "here").message() ==
        "here: unknown option 'colour' (defaults, methods, keywords)");
  PassOptions word;
  word.set("defaults", std::string("some"));
  CHECK(check_options(normalize, word, "here").message() ==
        "here: defaults must be \"explicit\", \"drop\" or \"keep\", not \"some\"");
  PassOptions flag;
  flag.set("keywords", std::string("yes"));
  CHECK(check_options(normalize, flag, "here").message() == "here: keywords must be true or false");
  PassOptions none;
  none.set("x", true);
  CHECK(check_options(*find_pass("specialize"), none, "here").message() == "here: unknown option 'x' (it takes none)");
}

TEST_CASE("pass registry: a failing pass reports its error") {
  GraphModule gm = test::module_of_text(R"(
    x = placeholder
    y = call_module missing(x)
    return y
  )");
  ModuleInfo present;
  present.path = "present";
  present.class_name = "torch.nn.ReLU";
  REQUIRE(gm.modules.add(present));
  PassContext context{.target = GraphModuleRef::graph_only(gm.graph, &gm.modules),
                      .schemas = OpSchemaRegistry::builtin()};
  Result<ReportValue> lint = run_pass(*find_pass("lint"), context);
  REQUIRE(!lint);
  CHECK(lint.status().message().find("missing") != std::string::npos);
}

}  // namespace
}  // namespace graft
