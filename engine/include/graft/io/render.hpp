// Human-facing views of a graph: FX-style table, Graphviz DOT, and statistics.
#pragma once

#include <string>

#include "graft/ir/graph.hpp"
#include "graft/ir/graph_module.hpp"

namespace graft {

/// Python `repr` of an argument as FX prints it (nodes by name, `'str'`, `torch.float32`).
std::string format_argument(const Graph& g, const Argument& arg);
/// The args tuple and kwargs dict, as FX's print_tabular shows them.
std::string format_args(const Graph& g, NodeId n);
std::string format_kwargs(const Graph& g, NodeId n);

/// A table like torch.fx's `Graph.print_tabular`: opcode, name, target, args, kwargs, and with
/// `with_values` a last column with each node's recorded value (`float32[1, 64, 56, 56]`).
std::string tabular(const Graph& g, bool with_values = false);
/// A node's recorded value as `dtype[shape]`, tuples in parentheses; empty when none.
std::string format_value_meta(const ValueMeta& v);
/// Graphviz DOT text: one vertex per node, one edge per data dependency.
std::string to_dot(const Graph& g, std::string_view graph_name = "graft");

/// Summary counts; `to_json` is stable (sorted keys, sorted targets).
struct GraphStats {
  std::size_t nodes = 0;
  std::vector<std::pair<std::string, std::size_t>> by_op;  ///< FX op order
  std::vector<std::pair<std::string, std::size_t>> by_target;  ///< most frequent first, then by name
  std::size_t modules = 0;
  std::size_t parameter_tensors = 0;
  std::size_t buffer_tensors = 0;
  std::int64_t parameter_elements = 0;
  std::string to_json() const;
  std::string to_text(std::size_t top_targets = 15) const;
};
GraphStats compute_stats(const GraphModule& gm);

}  // namespace graft
