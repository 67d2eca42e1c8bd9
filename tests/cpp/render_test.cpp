// Text views: the FX-style table, DOT and statistics.
#include <doctest/doctest.h>

#include "graft/io/dot.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/io/module_tree.hpp"
#include "graft/io/stats.hpp"
#include "graft/io/tabular.hpp"
#include "graft/ir/node_path.hpp"

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

namespace {

// graphpatch's TupleOutputModule as graft_fx export --hierarchy writes it (shortened), with the
// second call's Linear made opaque to show that form too.
constexpr const char* kHierarchy = R"({
"format": "graft-graph",
"version": 1,
"meta": {"hierarchy":true},
"modules": [
{"path":"","class":"tests.TupleOutputModule","parameters":[],"buffers":[]},
{"path":"linear","class":"graft_fx.hierarchy.MultiplyInvokedModule","parameters":[],"buffers":[]},
{"path":"linear.0","class":"torch.nn.modules.linear.Linear","parameters":[{"name":"weight","shape":[3,2],"dtype":"float32"},{"name":"bias","shape":[3],"dtype":"float32"}],"buffers":[],"origin":"linear","graph":{"nodes":[
{"name":"input_1","op":"placeholder","target":"input","args":[],"kwargs":{},"meta":{"tensor_meta":{"shape":[3,2],"dtype":"float32","stride":[2,1],"device":"cpu"}}},
{"name":"weight","op":"get_attr","target":"weight","args":[],"kwargs":{},"meta":{"tensor_meta":{"shape":[3,2],"dtype":"float32","stride":[2,1],"device":"cpu"}}},
{"name":"linear","op":"call_function","target":"torch._C._nn.linear","args":[{"node":"input_1"},{"node":"weight"}],"kwargs":{},"meta":{"tensor_meta":{"shape":[3,3],"dtype":"float32","stride":[3,1],"device":"cpu"}}},
{"name":"output","op":"output","target":"output","args":[{"node":"linear"}],"kwargs":{},"meta":{"tensor_meta":{"shape":[3,3],"dtype":"float32","stride":[3,1],"device":"cpu"}}}
]}},
{"path":"linear.1","class":"torch.nn.modules.linear.Linear","parameters":[{"name":"weight","shape":[3,2],"dtype":"float32"}],"buffers":[{"name":"count","shape":[],"dtype":"int64"}],"origin":"linear","opaque":"TraceError: no"}
],
"nodes": [
{"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{"tensor_meta":{"shape":[3,2],"dtype":"float32","stride":[2,1],"device":"cpu"}}},
{"name":"linear_0","op":"call_module","target":"linear.0","args":[{"node":"x"}],"kwargs":{},"meta":{"tensor_meta":{"shape":[3,3],"dtype":"float32","stride":[3,1],"device":"cpu"}}},
{"name":"linear_1","op":"call_module","target":"linear.1","args":[{"node":"x"}],"kwargs":{},"meta":{"tensor_meta":{"shape":[3,"s0"],"dtype":"float32","stride":[3,1],"device":"cpu"}}},
{"name":"output","op":"output","target":"output","args":[{"tuple":[{"node":"linear_0"},{"node":"linear_1"}]}],"kwargs":{},"meta":{"tensor_meta":[{"shape":[3,3],"dtype":"float32","stride":[3,1],"device":"cpu"},{"shape":[3,"s0"],"dtype":"float32","stride":[3,1],"device":"cpu"}]}}
]
}
)";

}  // namespace

TEST_CASE("render: the module tree opens each call's graph, lists an opaque module's tensors") {
  Result<GraphModule> gm = parse_graph_json(kHierarchy, "h.json");
  REQUIRE(gm.is_ok());
  CHECK(module_tree(*gm).value() ==
        "<root>: TupleOutputModule\n"
        "├─x: Tensor(3, 2)\n"
        "├─linear_0: Linear\n"
        "│ ├─input_1: Tensor(3, 2)\n"
        "│ ├─weight: Tensor(3, 2)\n"
        "│ ├─linear: Tensor(3, 3)\n"
        "│ └─output: Tensor(3, 3)\n"
        "├─linear_1: Linear (opaque: TraceError: no)\n"
        "│ ├─weight: Tensor(3, 2)\n"
        "│ ├─count: Tensor(dtype=int64)\n"
        "│ └─output: Tensor(3, s0)\n"
        "└─output: tuple(2)\n"
        "  ├─0: Tensor(3, 3)\n"
        "  └─1: Tensor(3, s0)\n");
  CHECK(module_tree(*gm, {.max_depth = 0, .shapes = false}).value() ==
        "<root>: TupleOutputModule\n"
        "├─x\n"
        "├─linear_0: Linear\n"
        "├─linear_1: Linear (opaque: TraceError: no)\n"
        "└─output\n");
  // Calls of one module share its parameters: counted once.
  CHECK(gm->modules.parameter_count() == 9);
}

TEST_CASE("render: origin and opaque are read strictly and saved as read") {
  const std::string text = kHierarchy;
  Result<GraphModule> gm = parse_graph_json(text, "h.json");
  REQUIRE(gm.is_ok());
  CHECK(gm->modules.find("linear.1")->opaque == "TraceError: no");
  CHECK(gm->modules.find("linear.0")->origin == "linear");
  auto error_of = [](std::string t) {
    Result<GraphModule> r = parse_graph_json(t, "h.json");
    REQUIRE_FALSE(r.is_ok());
    return r.status().message();
  };
  std::string both = text;
  const std::string origin = R"("origin":"linear",)";
  both.replace(both.find(origin + R"("graph")"), origin.size(), origin + R"("opaque":"x",)");
  CHECK(error_of(both) == "h.json: $.modules[2].opaque: a module with a graph is not opaque");
  std::string empty = text;
  empty.replace(empty.find(R"("opaque":"TraceError: no")"), 25, R"("opaque":"")");
  CHECK(error_of(empty).find("$.modules[3].opaque: say why the module is opaque") != std::string::npos);
}

TEST_CASE("node paths: through calls by node name or module path, to any node of a submodule's graph") {
  Result<GraphModule> gm = parse_graph_json(kHierarchy, "h.json");
  REQUIRE(gm.is_ok());
  auto at = [&](std::string_view path) {
    Result<NodeLocation> r = resolve_node_path(*gm, path);
    REQUIRE_MESSAGE(r.is_ok(), r.status().message());
    const Graph& g = r->module.empty() ? gm->graph : *gm->modules.find(r->module)->graph;
    return r->module + ":" + g.name(r->node);
  };
  CHECK(at("x") == ":x");
  CHECK(at("linear_0") == ":linear_0");
  CHECK(at("linear_0.output") == "linear.0:output");
  CHECK(at("linear.0.linear") == "linear.0:linear");  // the call's target, as the module path reads
  CHECK(at("linear_0.input") == "linear.0:input_1");  // a placeholder by its argument's name
  auto error = [&](std::string_view path) {
    Result<NodeLocation> r = resolve_node_path(*gm, path);
    REQUIRE_FALSE(r.is_ok());
    return r.status().message();
  };
  CHECK(error("linear_0.nothing") ==
        "node path 'linear_0.nothing': no node 'nothing' in the graph of module 'linear.0'");
  CHECK(error("nothing.output") == "node path 'nothing.output': no node 'nothing' in the root graph");
  CHECK(error("linear_1.output") ==
        "node path 'linear_1.output': module 'linear.1' has no graph of its own (opaque: TraceError: no), so its "
        "nodes have no names");
  CHECK(error("x.y") ==
        "node path 'x.y': node 'x' in the root graph is not a module call, so the path cannot go on to 'y'");
  CHECK(error("linear_0..output") == "node path 'linear_0..output': an empty segment");
}
