// libFuzzer target: pattern files. The bytes are read as a graph file (graft match --pattern,
// graft.pattern_file), made a matcher under options the last byte picks, matched against a
// small fixed graph and against itself, and used as its own replacement. Any outcome but a
// crash, a hang or a broken graph is fine; a rewrite that fails must leave the graph as it was.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/ir/lint.hpp"
#include "graft/match/subgraph_matcher.hpp"
#include "graft/rewrite/replace_pattern.hpp"

namespace {

using graft::fuzz::fail;

// relu(add(x, y)) twice over, with a literal, a kwarg, a getitem and a module call: enough
// shapes for a fuzzed pattern to match some of the time.
constexpr std::string_view kTarget = R"({"format":"graft-graph","version":1,"meta":{},"modules":[
{"path":"","class":"M","parameters":[],"buffers":[]},
{"path":"relu","class":"torch.nn.modules.activation.ReLU","parameters":[],"buffers":[]}],"nodes":[
{"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},
{"name":"y","op":"placeholder","target":"y","args":[],"kwargs":{},"meta":{}},
{"name":"add","op":"call_function","target":"torch.add","args":[{"node":"x"},{"node":"y"}],"kwargs":{"alpha":2},"meta":{}},
{"name":"relu","op":"call_function","target":"torch.relu","args":[{"node":"add"}],"kwargs":{},"meta":{}},
{"name":"add_1","op":"call_function","target":"torch.add","args":[{"node":"relu"},{"node":"y"}],"kwargs":{},"meta":{}},
{"name":"relu_1","op":"call_module","target":"relu","args":[{"node":"add_1"}],"kwargs":{},"meta":{}},
{"name":"split","op":"call_function","target":"torch.split","args":[{"node":"relu_1"},2],"kwargs":{},"meta":{}},
{"name":"getitem","op":"call_function","target":"_operator.getitem","args":[{"node":"split"},0],"kwargs":{},"meta":{}},
{"name":"mul","op":"call_function","target":"_operator.mul","args":[{"node":"getitem"},0.5],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"mul"}],"kwargs":{},"meta":{}}]}
)";

void exercise(const graft::GraphModule& pattern, graft::MatchOptions options, graft::GraphModule target) {
  graft::Result<graft::SubgraphMatcher> matcher = graft::SubgraphMatcher::create(pattern.graph, options);
  if (!matcher) return;
  (void)matcher->match(target.graph);
  const bool valid_before = lint(target.graph).is_ok();
  graft::Result<std::string> before = graft::to_graph_json(target);
  if (!before) fail("the target cannot be saved", before.status().message());
  graft::ReplaceOptions rewrite_options;
  rewrite_options.match = options;
  graft::Result<std::vector<graft::ReplacedPattern>> r =
      graft::replace_pattern(target.graph, pattern.graph, pattern.graph, rewrite_options);
  graft::Result<std::string> after = graft::to_graph_json(target);
  if (!r) {
    if (!after || after.value() != before.value()) fail("a failed rewrite changed the graph", r.status().message());
    return;
  }
  if (graft::Status s = lint(target.graph); !s && valid_before)
    fail("a rewrite left a graph that fails lint", s.message());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const graft::GraphModule kTargetGraph = graft::fuzz::fixed_graph(kTarget);
  if (size == 0) return 0;
  const std::uint8_t flags = data[size - 1];
  graft::Result<graft::GraphModule> pattern =
      graft::parse_graph_json(std::string_view(reinterpret_cast<const char*>(data), size - 1), "<pattern>");
  if (!pattern) return 0;
  graft::MatchOptions options;
  options.match_output = (flags & 1) != 0;
  options.match_placeholder = (flags & 2) != 0;
  options.remove_overlapping_matches = (flags & 4) == 0;
  options.ignore_literals = (flags & 8) != 0;
  exercise(pattern.value(), options, kTargetGraph);
  exercise(pattern.value(), options, pattern.value());
  return 0;
}
