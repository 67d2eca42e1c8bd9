// Specialisation: questions a graph asks about its tensors' metadata (`x.dtype`, `x.size()`,
// `x.dim()`, `x.shape[i]`) answered from the recorded tensor meta and folded into constants, as
// torch.dynamo's graphs have them.
#pragma once

#include <cstddef>

#include "graft/ir/graph.hpp"

namespace graft {

struct SpecializeReport {
  std::size_t folded = 0;  ///< nodes replaced by a constant and erased
};

/// Replaces, where the input's recorded tensor meta answers it with static sizes:
/// `getattr(x, "dtype")` (and `"device"`) by the dtype (device); `getattr(x, "shape")`,
/// `x.size()` by the tuple of sizes; `x.size(i)`, `x.dim()`, `getattr(x, "ndim")`, `x.numel()`
/// by the number; and then what that unlocks: `getitem` of a constant tuple by its item,
/// `_operator` arithmetic and comparisons of two numbers by the result (`h // p`, `x.dim() == 3`),
/// `torch._assert(True, ...)` removed, as torch.dynamo leaves them out of its graphs. Users
/// read the constant in place of the node, which is erased. Symbolic sizes are left as they are.
SpecializeReport specialize(Graph& g);

}  // namespace graft
