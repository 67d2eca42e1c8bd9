// Graphviz DOT view of a graph.
#pragma once

#include <string>
#include <string_view>

#include "graft/ir/graph.hpp"

namespace graft {

/// Graphviz DOT text: one vertex per node, one edge per data dependency.
std::string to_dot(const Graph& g, std::string_view graph_name = "graft");

}  // namespace graft
