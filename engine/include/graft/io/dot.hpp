// Graphviz DOT view of a graph.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "graft/ir/graph.hpp"

namespace graft {

/// Graphviz DOT text: one vertex per node, one edge per data dependency.
std::string to_dot(const Graph& g, std::string_view graph_name = "graft");

/// Groups of nodes to colour (a partitioning): `of` holds each slot's group index or kNoNode,
/// `labels` one legend entry per group.
struct DotGroups {
  std::vector<std::uint32_t> of;
  std::vector<std::string> labels;
  std::string others = "not partitioned";  ///< the legend entry for nodes in no group
};

/// The same, each group's nodes filled with its own colour (a palette of 12, repeated with a
/// different border style), the others white with a dashed border, and a legend.
std::string to_dot(const Graph& g, const DotGroups& groups, std::string_view graph_name = "graft");

}  // namespace graft
