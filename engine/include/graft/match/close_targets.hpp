// What a pattern that finds nothing may have meant: targets in the graph close to the one it
// calls, for `graft explain`.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "graft/ir/graph.hpp"

namespace graft {

/// One target of the graph a pattern's call may have meant.
struct CloseTarget {
  OpKind op = OpKind::CallFunction;
  std::string target;
  /// Why it is close: `torch.fx records torch.nn.functional.linear as torch._C._nn.linear`,
  /// `same operator name`, `2 edits away`.
  std::string why;
};

/// Distinct call_function / call_method targets of `g` close to `target` (called as `op`),
/// closest first, at most `limit`: another spelling of the same function, then the same
/// operator name (`linear` in `torch._C._nn.linear`, `torch.ops.aten.linear.default` and the
/// method `linear`), then a target a few character edits away. Ties in graph order.
std::vector<CloseTarget> close_targets(const Graph& g, OpKind op, std::string_view target, std::size_t limit = 3);

}  // namespace graft
