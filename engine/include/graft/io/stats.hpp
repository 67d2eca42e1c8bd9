// Summary counts of a graph module: nodes by kind and target, modules, parameters.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graft/ir/graph_module.hpp"

namespace graft {

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
