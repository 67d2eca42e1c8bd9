// Text views: the FX-style table, DOT and statistics.
#include <doctest/doctest.h>

#include "graft/io/dot.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/io/stats.hpp"
#include "graft/io/tabular.hpp"

using namespace graft;

namespace {

GraphModule small() {
  GraphModule gm;
  Graph& g = gm.graph;
  NodeId x = g.placeholder("x");
  NodeId to = g.create_node(OpKind::CallMethod, "to", {Argument::node(x), DType{"float32"}});
  NodeId add = g.create_node(OpKind::CallFunction, "_operator.add", {Argument::node(to), 1.5}, {{"alpha", 2}});
  g.output(Argument::tuple({Argument::node(add)}));
  return gm;
}

}  // namespace

TEST_CASE("render: print_tabular layout with Python reprs") {
  GraphModule gm = small();
  // Same columns, alignment and reprs as torch.fx's Graph.print_tabular (tabulate "simple").
  CHECK(tabular(gm.graph) ==
        "opcode         name    target         args                kwargs\n"
        "-------------  ------  -------------  ------------------  ------------\n"
        "placeholder    x       x              ()                  {}\n"
        "call_method    to      to             (x, torch.float32)  {}\n"
        "call_function  add     _operator.add  (to, 1.5)           {'alpha': 2}\n"
        "output         output  output         ((add,),)           {}\n");
}

TEST_CASE("render: DOT has one vertex per node and one edge per distinct input") {
  GraphModule gm = small();
  NodeId add = gm.graph.find("add");
  REQUIRE(gm.graph.set_args(add, {Argument::node(gm.graph.find("to")), Argument::node(gm.graph.find("to"))}).is_ok());
  std::string dot = to_dot(gm.graph, "small");
  CHECK(dot.rfind("digraph \"small\" {\n", 0) == 0);
  CHECK(dot.find("n0 [label=\"x\\nplaceholder\"") != std::string::npos);
  CHECK(dot.find("n2 [label=\"add\\ncall_function\\n_operator.add\"") != std::string::npos);
  CHECK(dot.find("  n0 -> n1;\n  n1 -> n2;\n  n2 -> n3;\n}\n") != std::string::npos);
}

TEST_CASE("render: stats count nodes by kind and target") {
  GraphModule gm = small();
  GraphStats s = compute_stats(gm);
  CHECK(s.nodes == 4);
  CHECK(s.to_json() ==
        "{\"nodes\":4,\"by_op\":{\"placeholder\":1,\"get_attr\":0,\"call_function\":1,\"call_method\":1,"
        "\"call_module\":0,\"output\":1},\"by_target\":{\"_operator.add\":1,\"method:to\":1},\"modules\":0,"
        "\"parameter_tensors\":0,\"buffer_tensors\":0,\"parameter_elements\":0}\n");
}
