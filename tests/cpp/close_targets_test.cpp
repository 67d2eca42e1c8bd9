// close_targets: what `graft explain` suggests when no node is what the pattern calls.
#include <doctest/doctest.h>

#include "graft/match/close_targets.hpp"
#include "test_graphs.hpp"

namespace graft {
namespace {

constexpr std::string_view kGraph = R"(
  x = placeholder
  w = placeholder
  l = call_function torch._C._nn.linear(x, w)
  g = call_function torch._C._nn.gelu(l)
  t = call_method transpose(g, 0, 1)
  a = call_function torch.ops.aten.linear.default(t, w)
  r = call_function torch.relu(a)
  return r
)";

std::vector<std::string> described(const std::vector<CloseTarget>& found) {
  std::vector<std::string> out;
  out.reserve(found.size());
  for (const CloseTarget& c : found) out.push_back(std::string(op_kind_name(c.op)) + " " + c.target + ": " + c.why);
  return out;
}

TEST_CASE("close_targets: the name torch.fx records first, then the same operator name") {
  GraphModule gm = test::module_of_text(kGraph);
  CHECK(described(close_targets(gm.graph, OpKind::CallFunction, "torch.nn.functional.linear")) ==
        std::vector<std::string>{
            "call_function torch._C._nn.linear: torch.fx records torch.nn.functional.linear as torch._C._nn.linear",
            "call_function torch.ops.aten.linear.default: same operator name"});
}

TEST_CASE("close_targets: a method for a function, a misspelling, nothing for an unrelated name") {
  GraphModule gm = test::module_of_text(kGraph);
  CHECK(described(close_targets(gm.graph, OpKind::CallFunction, "torch.transpose")) ==
        std::vector<std::string>{"call_method transpose: same operator name"});
  CHECK(described(close_targets(gm.graph, OpKind::CallFunction, "torch.reul")) ==
        std::vector<std::string>{"call_function torch.relu: 2 edits away"});
  CHECK(close_targets(gm.graph, OpKind::CallFunction, "torch.ops.aten.softmax.int").empty());
  CHECK(close_targets(gm.graph, OpKind::CallFunction, "torch.nn.functional.linear", 1).size() == 1);
}

}  // namespace
}  // namespace graft
