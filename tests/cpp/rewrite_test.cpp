// replace_pattern: metadata carried over. Rewrites and their errors as whole graphs are the goldens in
// tests/golden/rewrite (rewrite_golden_test.cpp).
#include <doctest/doctest.h>

#include "graft/io/graph_json.hpp"
#include "graft/io/graph_text.hpp"
#include "graft/ir/lint.hpp"
#include "graft/rewrite/replace_pattern.hpp"
#include "test_graphs.hpp"

using namespace graft;
using graft::test::module_of;

namespace {

const char* kGraph = R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},
{"name":"s1","op":"call_function","target":"torch.sigmoid","args":[{"node":"x"}],"kwargs":{},"meta":{"stack_trace":"m.py:1"}},
{"name":"s2","op":"call_function","target":"torch.sigmoid","args":[{"node":"s1"}],"kwargs":{},"meta":{"stack_trace":"m.py:2"}},
{"name":"output","op":"output","target":"output","args":[{"node":"s2"}],"kwargs":{},"meta":{}})";

const char* kPattern = R"({"name":"a","op":"placeholder","target":"a","args":[],"kwargs":{},"meta":{}},
{"name":"b","op":"placeholder","target":"b","args":[],"kwargs":{},"meta":{}},
{"name":"p1","op":"call_function","target":"torch.sigmoid","args":[{"node":"a"}],"kwargs":{},"meta":{}},
{"name":"p2","op":"call_function","target":"torch.sigmoid","args":[{"node":"p1"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"p2"}],"kwargs":{},"meta":{}})";

}  // namespace

TEST_CASE("rewrite: replaces, reports the new nodes, and can carry metadata over") {
  GraphModule gm = module_of(kGraph);
  GraphModule pattern = module_of(kPattern);
  GraphModule replacement = module_of(R"({"name":"a","op":"placeholder","target":"a","args":[],"kwargs":{},"meta":{}},
{"name":"b","op":"placeholder","target":"b","args":[],"kwargs":{},"meta":{}},
{"name":"tanh","op":"call_function","target":"torch.tanh","args":[{"node":"a"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"tanh"}],"kwargs":{},"meta":{}})");
  ReplaceOptions options;
  options.meta = MetaPolicy::Outputs;
  auto done = replace_pattern(gm.graph, pattern.graph, replacement.graph, options);
  REQUIRE_MESSAGE(done.is_ok(), done.status().message());
  REQUIRE(done->size() == 1);
  REQUIRE(done->at(0).replacements.size() == 1);
  const NodeId tanh = done->at(0).replacements[0];
  CHECK(gm.graph.target(tanh) == "torch.tanh");
  CHECK(gm.graph.find("s1") == kNoNode);
  CHECK(gm.graph.find("s2") == kNoNode);
  REQUIRE(gm.graph.meta(tanh).extra.size() == 1);
  CHECK(gm.graph.meta(tanh).extra[0].second == "\"m.py:2\"");  // the replaced output's metadata
  CHECK(lint(gm).is_ok());
}

TEST_CASE("rewrite: every match filter sees the graph as matched, before any replacement") {
  GraphModule gm = module_of(R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},
{"name":"s1","op":"call_function","target":"torch.sigmoid","args":[{"node":"x"}],"kwargs":{},"meta":{}},
{"name":"s2","op":"call_function","target":"torch.sigmoid","args":[{"node":"s1"}],"kwargs":{},"meta":{}},
{"name":"s3","op":"call_function","target":"torch.sigmoid","args":[{"node":"s2"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"s3"}],"kwargs":{},"meta":{}})");
  GraphModule pattern = module_of(R"({"name":"a","op":"placeholder","target":"a","args":[],"kwargs":{},"meta":{}},
{"name":"p","op":"call_function","target":"torch.sigmoid","args":[{"node":"a"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"p"}],"kwargs":{},"meta":{}})");
  GraphModule replacement = module_of(R"({"name":"a","op":"placeholder","target":"a","args":[],"kwargs":{},"meta":{}},
{"name":"e","op":"call_function","target":"torch.exp","args":[{"node":"a"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"e"}],"kwargs":{},"meta":{}})");
  ReplaceOptions options;
  std::vector<std::size_t> exps_seen;
  options.filters.push_back([&](const SubgraphMatch&, const Graph& g, const Graph&) {
    std::size_t exps = 0;
    for (NodeId n : g.nodes()) exps += g.target(n) == "torch.exp";
    exps_seen.push_back(exps);
    return true;
  });
  auto done = replace_pattern(gm.graph, pattern.graph, replacement.graph, options);
  REQUIRE_MESSAGE(done.is_ok(), done.status().message());
  CHECK(done->size() == 3);
  CHECK(exps_seen == std::vector<std::size_t>{0, 0, 0});  // FX filters all matches first
  CHECK(lint(gm).is_ok());
}

TEST_CASE("rewrite: a replacement get_attr the pattern also reads is the tensor that match bound") {
  GraphModule gm = module_of(R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},
{"name":"w0","op":"get_attr","target":"blocks.0.l0.weight","args":[],"kwargs":{},"meta":{}},
{"name":"m0","op":"call_function","target":"torch.mm","args":[{"node":"x"},{"node":"w0"}],"kwargs":{},"meta":{}},
{"name":"w1","op":"get_attr","target":"blocks.1.l0.weight","args":[],"kwargs":{},"meta":{}},
{"name":"m1","op":"call_function","target":"torch.mm","args":[{"node":"m0"},{"node":"w1"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"m1"}],"kwargs":{},"meta":{}})");
  GraphModule pattern = module_of(R"({"name":"a","op":"placeholder","target":"a","args":[],"kwargs":{},"meta":{}},
{"name":"w","op":"get_attr","target":"l0.weight","args":[],"kwargs":{},"meta":{}},
{"name":"p","op":"call_function","target":"torch.mm","args":[{"node":"a"},{"node":"w"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"p"}],"kwargs":{},"meta":{}})");
  GraphModule replacement = module_of(R"({"name":"a","op":"placeholder","target":"a","args":[],"kwargs":{},"meta":{}},
{"name":"w","op":"get_attr","target":"l0.weight","args":[],"kwargs":{},"meta":{}},
{"name":"t","op":"call_function","target":"torch.t","args":[{"node":"w"}],"kwargs":{},"meta":{}},
{"name":"r","op":"call_function","target":"torch.matmul","args":[{"node":"a"},{"node":"w"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"r"}],"kwargs":{},"meta":{}})");
  auto done = replace_pattern(gm.graph, pattern.graph, replacement.graph, ReplaceOptions{});
  REQUIRE_MESSAGE(done.is_ok(), done.status().message());
  REQUIRE(done->size() == 2);
  std::vector<std::string> attributes;
  for (NodeId n : gm.graph.nodes())
    if (gm.graph.op(n) == OpKind::GetAttr) attributes.push_back(gm.graph.target(n));
  CHECK(attributes == std::vector<std::string>{"blocks.0.l0.weight", "blocks.1.l0.weight"});
  const NodeId second = gm.graph.args(gm.graph.output_node())[0].node_id();
  CHECK(gm.graph.target(second) == "torch.matmul");
  CHECK(gm.graph.target(gm.graph.args(second)[1].node_id()) == "blocks.1.l0.weight");
  CHECK(lint(gm).is_ok());
}

TEST_CASE("rewrite: a replacement per match, and never the graph's output node") {
  GraphModule gm = module_of(R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},
{"name":"s1","op":"call_function","target":"torch.sigmoid","args":[{"node":"x"}],"kwargs":{},"meta":{}},
{"name":"s2","op":"call_function","target":"torch.sigmoid","args":[{"node":"s1"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"s2"}],"kwargs":{},"meta":{}})");
  GraphModule pattern = module_of(R"({"name":"a","op":"placeholder","target":"a","args":[],"kwargs":{},"meta":{}},
{"name":"p","op":"call_function","target":"torch.sigmoid","args":[{"node":"a"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"p"}],"kwargs":{},"meta":{}})");
  auto one_call = [](const char* target) {
    return module_of(std::string(R"({"name":"a","op":"placeholder","target":"a","args":[],"kwargs":{},"meta":{}},
{"name":"r","op":"call_function","target":")") +
                     target + R"(","args":[{"node":"a"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"r"}],"kwargs":{},"meta":{}})");
  };
  GraphModule tanh = one_call("torch.tanh");
  GraphModule relu = one_call("torch.relu");
  auto matcher = SubgraphMatcher::create(pattern.graph, MatchOptions{.remove_overlapping_matches = false});
  REQUIRE(matcher);

  SUBCASE("each match gets its own") {
    auto done = replace_matches(gm.graph, *matcher, matcher->match(gm.graph), {&tanh.graph, &relu.graph});
    REQUIRE_MESSAGE(done.is_ok(), done.status().message());
    REQUIRE(done->size() == 2);
    CHECK(gm.graph.target(done->at(0).replacements[0]) == "torch.tanh");
    CHECK(gm.graph.target(done->at(1).replacements[0]) == "torch.relu");
    CHECK(lint(gm).is_ok());
  }
  SUBCASE("a count that does not fit is refused") {
    auto done = replace_matches(gm.graph, *matcher, matcher->match(gm.graph), {&tanh.graph});
    REQUIRE_FALSE(done.is_ok());
    CHECK(done.status().message() == "1 replacements for 2 matches");
  }
  SUBCASE("a match on the output node (node_name_match 'out') is refused, changing nothing") {
    auto named = matcher->with_node_name_match("out");
    const std::string before = to_graph_text(gm.graph);
    auto found = named.match(gm.graph);
    REQUIRE(found.size() == 3);  // s1, s2, and the output by its name
    auto done = replace_matches(gm.graph, named, found, tanh.graph);
    REQUIRE_FALSE(done.is_ok());
    CHECK(done.status().message() ==
          "the graph's output node 'output' cannot be replaced: match 2 binds the pattern's 'p' to it");
    CHECK(to_graph_text(gm.graph) == before);
  }
}
