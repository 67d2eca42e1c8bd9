// replace_pattern: errors leave the graph as it was; inputs the pattern never binds; metadata.
#include <doctest/doctest.h>

#include "graft/io/graph_json.hpp"
#include "graft/ir/lint.hpp"
#include "graft/rewrite/replace_pattern.hpp"
#include "test_graphs.hpp"

using namespace graft;
using graft::test::module_of;

namespace {

std::string text(const GraphModule& gm) {
  Result<std::string> r = to_graph_json(gm);
  REQUIRE(r.is_ok());
  return r.value();
}

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

TEST_CASE("rewrite: a replacement using an input the pattern never binds is refused, and nothing changes") {
  GraphModule gm = module_of(kGraph);
  const std::string before = text(gm);
  GraphModule pattern = module_of(kPattern);  // `b` is unused in the pattern
  GraphModule replacement = module_of(R"({"name":"a","op":"placeholder","target":"a","args":[],"kwargs":{},"meta":{}},
{"name":"b","op":"placeholder","target":"b","args":[],"kwargs":{},"meta":{}},
{"name":"add","op":"call_function","target":"torch.add","args":[{"node":"a"},{"node":"b"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"add"}],"kwargs":{},"meta":{}})");
  auto done = replace_pattern(gm.graph, pattern.graph, replacement.graph);
  REQUIRE_FALSE(done.is_ok());
  CHECK(done.status().message() ==
        "node 'b': the replacement uses input 'b', which the pattern never uses, so no match binds it");
  CHECK(text(gm) == before);
  CHECK_FALSE(gm.graph.in_transaction());
}

TEST_CASE("rewrite: a count mismatch is refused and leaves the graph as it was") {
  GraphModule gm = module_of(R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},
{"name":"s1","op":"call_function","target":"torch.sigmoid","args":[{"node":"x"}],"kwargs":{},"meta":{}},
{"name":"s2","op":"call_function","target":"torch.sigmoid","args":[{"node":"s1"}],"kwargs":{},"meta":{}},
{"name":"s3","op":"call_function","target":"torch.sigmoid","args":[{"node":"s2"}],"kwargs":{},"meta":{}},
{"name":"s4","op":"call_function","target":"torch.sigmoid","args":[{"node":"s3"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"s4"}],"kwargs":{},"meta":{}})");
  const std::string before = text(gm);
  GraphModule pattern = module_of(kPattern);
  GraphModule two_outputs = module_of(R"({"name":"a","op":"placeholder","target":"a","args":[],"kwargs":{},"meta":{}},
{"name":"b","op":"placeholder","target":"b","args":[],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"tuple":[{"node":"a"},{"node":"a"}]}],"kwargs":{},"meta":{}})");
  auto done = replace_pattern(gm.graph, pattern.graph, two_outputs.graph);
  REQUIRE_FALSE(done.is_ok());
  CHECK(done.status().message() == "returning nodes count mismatch: the pattern returns 1 values, the replacement 2");
  CHECK(text(gm) == before);
}
