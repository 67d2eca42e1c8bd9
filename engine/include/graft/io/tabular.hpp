// torch.fx's print_tabular view of a graph.
#pragma once

#include <string>

#include "graft/ir/graph.hpp"

namespace graft {

/// A table like torch.fx's `Graph.print_tabular`: opcode, name, target, args, kwargs, and with
/// `with_values` a last column with each node's recorded value (`float32[1, 64, 56, 56]`).
std::string tabular(const Graph& g, bool with_values = false);

}  // namespace graft
