// `graft partition SUPPORT.lua GRAPH`: cut a graph into the partitions a backend runs, say why
// every other node is left out, and optionally fuse the partitions into submodules.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "graft/analysis/partitioner.hpp"
#include "run_command.hpp"

namespace graft::cli {

struct PartitionCommandOptions {
  RunOptions script;  ///< script.pipeline: the support script; script.graph: the graph; limits
  std::string output;  ///< fused graph file ("" = do not fuse)
  std::string dot;  ///< DOT or SVG picture of the partitions ("" = none)
  std::string prefix = "fused_";
  bool json = false;
  bool explain = false;
  bool quiet = false;  ///< print nothing (graft dot --partition)
  /// Options given on the command line, combined with the script's table (docs/reference/lua.md).
  PartitionOptions options{};
  bool set_single = false, set_skip = false, set_bookends = false;
};

void add_partition_options(CLI::App& cmd, PartitionCommandOptions& o);
int cmd_partition(const PartitionCommandOptions& o);

}  // namespace graft::cli
