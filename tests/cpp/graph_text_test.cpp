// The graph text notation: what each spelling reads as, errors with line and column, and round
// trips of real graphs.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "graft/io/graph_json.hpp"
#include "graft/io/graph_text.hpp"
#include "graft/ir/lint.hpp"

using namespace graft;

namespace {

Graph read(const std::string& text) {
  Result<Graph> g = parse_graph_text(text, "t.txt");
  REQUIRE_MESSAGE(g.is_ok(), g.status().message());
  return std::move(g).value();
}

std::string error_of(const std::string& text) {
  Result<Graph> g = parse_graph_text(text, "t.txt");
  REQUIRE_FALSE(g.is_ok());
  return g.status().message();
}

std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Equal values, node references compared by the names they point at (the graphs differ).
bool same_arguments(const Graph& ga, const std::vector<Argument>& a, const Graph& gb, const std::vector<Argument>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].kind() != b[i].kind()) return false;
    if (a[i].is_node()) {
      if (ga.name(a[i].node_id()) != gb.name(b[i].node_id())) return false;
    } else if (a[i].items() != nullptr) {
      if (!same_arguments(ga, *a[i].items(), gb, *b[i].items())) return false;
    } else if (!(a[i] == b[i])) {
      return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("graph text: nodes, ops, targets and every kind of value") {
  const Graph g = read(R"(# a comment line
x = placeholder
y = placeholder y_input
w = get_attr layer.weight   # trailing comment
add = call_function torch.add(x, y, alpha=2)
t = call_method transpose(add, 0, -1)
m = call_module layer.0.conv(t)
v = call_function f(None, True, False, 1.5, -2.0, 1e-05, inf, -inf, nan, 'a\'b#\n', "q", [x, 1], (y,), (), {'k': x, 3: None}, slice(None, 2, None))
e = call_function g(torch.float16, torch.strided, torch.channels_last, device(type='cpu'), device(type='cuda', index=1), (x), '\x80é\u00e9')

return (m, v)
)");
  REQUIRE(g.size() == 9);
  const NodeId x = g.find("x"), y = g.find("y"), add = g.find("add"), v = g.find("v"), e = g.find("e");
  CHECK(g.op(x) == OpKind::Placeholder);
  CHECK(g.target(x) == "x");
  CHECK(g.target(y) == "y_input");
  CHECK(g.op(g.find("w")) == OpKind::GetAttr);
  CHECK(g.target(g.find("w")) == "layer.weight");
  CHECK(g.args(add) == std::vector<Argument>{Argument::node(x), Argument::node(y)});
  REQUIRE(g.kwargs(add).size() == 1);
  CHECK(g.kwargs(add)[0].first == "alpha");
  CHECK(g.kwargs(add)[0].second == Argument(2));
  CHECK(g.op(g.find("t")) == OpKind::CallMethod);
  CHECK(g.args(g.find("t"))[2] == Argument(-1));
  CHECK(g.target(g.find("m")) == "layer.0.conv");

  const auto& a = g.args(v);
  REQUIRE(a.size() == 16);
  CHECK(a[0].is_none());
  CHECK(a[1] == Argument(true));
  CHECK(a[2] == Argument(false));
  CHECK(a[3] == Argument(1.5));
  CHECK(a[4] == Argument(-2.0));
  CHECK(a[5] == Argument(1e-05));
  CHECK(a[6] == Argument(INFINITY));
  CHECK(a[7] == Argument(-INFINITY));
  CHECK(std::isnan(a[8].get<double>()));
  CHECK(a[9] == Argument("a'b#\n"));
  CHECK(a[10] == Argument("q"));
  CHECK(a[11] == Argument::list({Argument::node(x), 1}));
  CHECK(a[12] == Argument::tuple({Argument::node(y)}));
  CHECK(a[13] == Argument::tuple({}));
  Dict d;
  d.add("k", Argument::node(x));
  d.add(3, NoneValue{});
  CHECK(a[14] == Argument(d));
  CHECK(a[15] == Argument(Slice{{NoneValue{}, 2, NoneValue{}}}));

  const auto& b = g.args(e);
  REQUIRE(b.size() == 7);
  CHECK(b[0] == Argument(DType{"float16"}));
  CHECK(b[1] == Argument(Layout{"strided"}));
  CHECK(b[2] == Argument(MemoryFormat{"channels_last"}));
  CHECK(b[3] == Argument(Device{"cpu"}));
  CHECK(b[4] == Argument(Device{"cuda:1"}));
  CHECK(b[5] == Argument::node(x));  // parentheses around one value group it, as in Python
  CHECK(b[6] == Argument(std::string("\x80\xc3\xa9\xc3\xa9")));

  const NodeId out = g.output_node();
  REQUIRE(out != kNoNode);
  CHECK(g.name(out) == "output");
  CHECK(g.args(out)[0] == Argument::tuple({Argument::node(g.find("m")), Argument::node(v)}));
}

TEST_CASE("graph text: printing gives the notation back, byte for byte") {
  const std::string text = R"(x = placeholder
y = placeholder y_input
w = get_attr layer.weight
add = call_function torch.add(x, y, alpha=2)
t = call_method transpose(add, 0, -1)
r = call_function torch.randn()
v = call_function f(None, True, 1.5, 1e-05, inf, nan, 'a\'b\n', [x, 1], (y,), (), {'k': x}, slice(None, 2, None), (Ellipsis, 0))
e = call_function g(torch.float16, torch.strided, device(type='cuda', index=1), '\x80é')
return (t, v, e)
)";
  CHECK(to_graph_text(read(text)) == text);
}

TEST_CASE("graph text: errors name the source, line and column") {
  CHECK(error_of("x = placeholder\ny = call_function torch.relu(z)\n") ==
        "t.txt:2:30: no node named 'z' before this line");
  CHECK(error_of("x = placeholder\ny = call_fn torch.relu(x)\n") ==
        "t.txt:2:5: expected an op: placeholder, get_attr, call_function, call_method, call_module or output");
  CHECK(error_of("x = placeholder\nx = placeholder\n") == "t.txt:2:1: a node named 'x' already exists");
  CHECK(error_of("x = placeholder\ny = call_function f(x\n") == "t.txt:2:22: expected ',' or ')' between arguments");
  CHECK(error_of("x = placeholder\ny = call_function f(a=1, x)\n") ==
        "t.txt:2:26: a positional argument after keyword arguments");
  CHECK(error_of("y = call_function f('abc)\n") == "t.txt:1:21: string not closed on this line");
  CHECK(error_of("y = call_function f(99999999999999999999)\n") ==
        "t.txt:1:21: 99999999999999999999 does not fit in 64 bits");
  CHECK(error_of("y = call_function f('\\q')\n") == "t.txt:1:22: unknown escape '\\q'");
  CHECK(error_of("y = call_function f(slice(1, 2))\n") ==
        "t.txt:1:21: slice takes three values: slice(start, stop, step)");
  CHECK(error_of("y = call_function\n") == "t.txt:1:18: expected a target after the op");
  CHECK(error_of("x = placeholder\nreturn x\nreturn x\n") == "t.txt:3:1: nothing may follow the output (return)");
  CHECK(error_of("x = placeholder\nreturn x\ny = placeholder\n") ==
        "t.txt:3:1: nothing may follow the output (return)");
  CHECK(error_of("inf = placeholder\n") == "t.txt:1:1: 'inf' is a value in this notation, not a node name");
  CHECK(error_of("x = placeholder\ny = call_function f(x, a=1, a=2)\n") == "t.txt:2:29: keyword 'a' given twice");
  CHECK(error_of("y = call_function f(device('cpu'))\n") ==
        "t.txt:1:21: a device is written device(type='cuda', index=0)");
  // Found by graph_text_fuzz: a type holding ':' or a quote printed back as text that did not parse.
  CHECK(error_of("y = call_function f(device(type='cud:a', index=1))\n") ==
        "t.txt:1:21: a device is written device(type='cuda', index=0)");
  CHECK(error_of("y = call_function f(device(type='c\\'u'))\n") ==
        "t.txt:1:21: a device is written device(type='cuda', index=0)");
  CHECK(error_of("y = call_function f(device(type='cuda', index=-1))\n") ==
        "t.txt:1:21: a device is written device(type='cuda', index=0)");
  CHECK(error_of("y = call_function f('\\ud800')\n") == "t.txt:1:22: \\u escape: U+D800 is not a Unicode scalar value");
  CHECK(error_of("y = call_function f(" + std::string(300, '[') + ")\n") ==
        "t.txt:1:221: values nested deeper than 200");
  CHECK(error_of("output = placeholder\nreturn output\n") ==
        "t.txt:2:1: return makes a node named 'output', and one exists already");
  CHECK(error_of("x = placeholder extra stuff\n") == "t.txt:1:23: unexpected text after the node");
}

TEST_CASE("graph text: a real exported model reads back with the same structure") {
  const auto path = std::filesystem::path(GRAFT_TEST_DATA) / ".." / ".." / "examples" / "graphs" / "vit_b_16.aten.json";
  Result<GraphModule> gm = parse_graph_json(file_text(path), path.string());
  REQUIRE_MESSAGE(gm.is_ok(), gm.status().message());
  const Graph& original = gm->graph;
  const Graph back = read(to_graph_text(original));
  REQUIRE(back.size() == original.size());
  NodeId b = back.first();
  for (NodeId a : original.nodes()) {
    CAPTURE(original.name(a));
    REQUIRE(b != kNoNode);
    CHECK(back.name(b) == original.name(a));
    CHECK(back.op(b) == original.op(a));
    CHECK(back.target(b) == original.target(a));
    CHECK(same_arguments(original, original.args(a), back, back.args(b)));
    REQUIRE(back.kwargs(b).size() == original.kwargs(a).size());
    for (std::size_t i = 0; i < back.kwargs(b).size(); ++i) {
      CHECK(back.kwargs(b)[i].first == original.kwargs(a)[i].first);
      CHECK(same_arguments(original, {original.kwargs(a)[i].second}, back, {back.kwargs(b)[i].second}));
    }
    b = back.next(b);
  }
  CHECK(lint(back).is_ok());
}
