// Whole-graph analyses that run Boost.Graph algorithms on the IR (bodies in src/analysis/,
// the only place BGL's algorithm headers are compiled).
#pragma once

#include <cstdint>
#include <vector>

#include "graft/ir/graph.hpp"
#include "graft/status.hpp"

namespace graft {

/// A topological order computed by boost::topological_sort (DFS finish order); fails naming
/// a node if the graph has a cycle. The graph's own order is not changed.
Result<std::vector<NodeId>> bgl_topological_order(const Graph& g);

/// Strongly connected components by boost::strong_components.
struct Components {
  std::vector<std::uint32_t> component;  ///< per slot; dead slots hold kNoNode
  std::size_t count = 0;
  /// Components that are cycles (more than one node, or a node that uses itself), each
  /// sorted by graph order; the list is sorted by its first node's position.
  std::vector<std::vector<NodeId>> cycles;
};
Components strongly_connected_components(const Graph& g);

}  // namespace graft
