// GraphModule: what a graph file holds — a graph, its module table and file-level metadata.
#pragma once

#include <string>

#include "graft/ir/graph.hpp"
#include "graft/ir/module_table.hpp"

namespace graft {

struct GraphModule {
  Graph graph;
  ModuleTable modules;
  std::string meta_json = "{}";  ///< free-form file metadata, canonical JSON text
};

}  // namespace graft
