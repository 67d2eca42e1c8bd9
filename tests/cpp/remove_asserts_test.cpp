// remove_asserts: the runtime checks torch leaves in graphs, removed through the registry.
#include <doctest/doctest.h>

#include "graft/io/graph_text.hpp"
#include "graft/ir/transaction.hpp"
#include "graft/passes/pass_registry.hpp"
#include "test_graphs.hpp"

namespace graft {
namespace {

TEST_CASE("remove_asserts: torch.fx's and torch.export's checks go, what fed them stays for DCE") {
  GraphModule gm = test::module_of_text(R"(
    x = placeholder
    n = placeholder
    eq = call_function _operator.eq(n, 3)
    _assert = call_function torch._assert(eq, 'wrong size')
    ge = call_function _operator.ge(n, 0)
    _assert_scalar = call_function torch.ops.aten._assert_scalar.default(ge, 'u0 >= 0')
    _assert_scalar_1 = call_function torch.ops.aten._assert_scalar.default(ge, 'again')
    relu = call_function torch.relu(x)
    return relu
  )");
  PassContext context{.target = GraphModuleRef::graph_only(gm.graph, &gm.modules),
                      .schemas = OpSchemaRegistry::builtin()};
  Result<ReportValue> report = run_pass(*find_pass("remove_asserts"), context);
  REQUIRE(report);
  CHECK(to_graph_text(gm.graph) ==
        "x = placeholder\n"
        "n = placeholder\n"
        "eq = call_function _operator.eq(n, 3)\n"
        "ge = call_function _operator.ge(n, 0)\n"
        "relu = call_function torch.relu(x)\n"
        "return relu\n");
  REQUIRE(report->kind == ReportValue::Kind::Record);
  CHECK(report->keys == std::vector<std::string>{"removed", "targets"});
  CHECK(report->items[0].number == 3);
  const ReportValue& targets = report->items[1];
  REQUIRE(targets.items.size() == 2);
  CHECK(targets.items[0].items[0].text == "torch._assert");
  CHECK(targets.items[0].items[1].number == 1);
  CHECK(targets.items[1].items[0].text == "torch.ops.aten._assert_scalar.default");
  CHECK(targets.items[1].items[1].number == 2);
}

TEST_CASE("remove_asserts: a check something reads, and other calls, are kept") {
  GraphModule gm = test::module_of_text(R"(
    x = placeholder
    _assert_async = call_function torch.ops.aten._assert_async.msg(x, 'nonzero')
    add = call_function _operator.add(x, _assert_async)
    return add
  )");
  const std::string before = to_graph_text(gm.graph);
  PassContext context{.target = GraphModuleRef::graph_only(gm.graph, &gm.modules),
                      .schemas = OpSchemaRegistry::builtin()};
  Result<ReportValue> report = run_pass(*find_pass("remove_asserts"), context);
  REQUIRE(report);
  CHECK(report->items[0].number == 0);
  CHECK(to_graph_text(gm.graph) == before);
}

TEST_CASE("remove_asserts: submodules' graphs too, when the host lets the pass edit them") {
  GraphModule gm = test::module_of_text(R"(
    x = placeholder
    inner = call_module inner(x)
    return inner
  )");
  Result<Graph> inner = parse_graph_text(R"(
    y = placeholder
    _assert_scalar = call_function torch.ops.aten._assert_scalar.default(True, 'u0 >= 0')
    relu = call_function torch.relu(y)
    return relu
  )");
  REQUIRE(inner);
  ModuleInfo root;
  REQUIRE(gm.modules.add(root).is_ok());
  ModuleInfo sub;
  sub.path = "inner";
  sub.class_name = "torch.fx.graph_module.GraphModule";
  sub.graph = std::move(inner).value();
  REQUIRE(gm.modules.add(std::move(sub)).is_ok());
  const std::string before = to_graph_text(*gm.modules.find("inner")->graph);

  SUBCASE("read-only table: the root graph only") {
    PassContext context{.target = GraphModuleRef::graph_only(gm.graph, &gm.modules),
                        .schemas = OpSchemaRegistry::builtin()};
    REQUIRE(run_pass(*find_pass("remove_asserts"), context));
    CHECK(to_graph_text(*gm.modules.find("inner")->graph) == before);
  }
  SUBCASE("editable: the submodule's check goes, and a rollback brings it back") {
    Transaction transaction(gm);
    PassContext context{.target = GraphModuleRef::whole(gm), .schemas = OpSchemaRegistry::builtin()};
    Result<ReportValue> report = run_pass(*find_pass("remove_asserts"), context);
    REQUIRE(report);
    CHECK(report->items[0].number == 1);
    CHECK(to_graph_text(*gm.modules.find("inner")->graph) ==
          "y = placeholder\n"
          "relu = call_function torch.relu(y)\n"
          "return relu\n");
    transaction.rollback();
    CHECK(to_graph_text(*gm.modules.find("inner")->graph) == before);
  }
}

}  // namespace
}  // namespace graft
