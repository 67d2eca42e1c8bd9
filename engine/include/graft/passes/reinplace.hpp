// Re-inplacing: the memory-saving inverse of functionalisation. A functional call whose input
// dies there writes its result into that input instead of a new tensor.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "graft/ir/graph.hpp"
#include "graft/ir/op_schema.hpp"

namespace graft {

/// One call that has an in-place form, and what happened to it.
struct ReinplaceDecision {
  NodeId node = kNoNode;
  std::string inplace_target;  ///< `torch.ops.aten.relu_.default`
  bool done = false;
  std::string reason;  ///< why not, when not done: `'a' is read later by 'b'`
};

struct ReinplaceReport {
  std::size_t done = 0;
  std::vector<ReinplaceDecision> decisions;  ///< every candidate, in graph order
};

/// Turns `b = op(a, ...)` into `op_(a, ...)` (the overload of `op_` with the same arguments,
/// its first one written; of the same overload name, else the only one; none for a view op)
/// where that is safe, as torch.fx's `reinplace` does: `a` is not a graph
/// input or module tensor nor may alias one; neither `a` nor anything that may alias it is read
/// after the call; no other argument of the call is `a` or may alias it; and the recorded tensor
/// meta shows the result has `a`'s shape and dtype (a call without meta is refused: the result
/// might need a resize), no stride of `a` is 0 on a dimension of size above 1 (an expand), and
/// `a`'s strides are the result's on every dimension of size above 1 (its readers were recorded
/// reading the result's layout). Readers of `b` keep reading it (it is `a` now), and its tensor
/// meta becomes `a`'s: an in-place call returns its input, strides included (they may differ
/// from the functional result's on size-1 dimensions). Calls without a schema count as aliasing all
/// their inputs. Every candidate is reported with its reason.
ReinplaceReport reinplace(Graph& g, const OpSchemaRegistry& ops = OpSchemaRegistry::builtin());

}  // namespace graft
