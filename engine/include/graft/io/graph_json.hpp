// Reading and writing graph files (docs/FORMAT.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "graft/ir/graph_module.hpp"
#include "graft/status.hpp"

namespace graft {

/// The format version this build reads and writes.
inline constexpr int kGraphFormatVersion = 1;

/// Parses a graph file's text. `source` names it in errors (a file path, or `<memory>`).
Result<GraphModule> parse_graph_json(std::string_view text, std::string_view source = "<memory>");
/// Reads and parses a graph file.
Result<GraphModule> load_graph_file(const std::string& path);
/// Loading keeps one parser per thread so that reloads do not fault its buffers in again
/// (about 3x the largest file read, up to 512 MiB files). This frees it now.
void release_parser_memory();

/// The canonical text of `gm` (docs/FORMAT.md §5). Fails if the graph refers to dead nodes.
Result<std::string> to_graph_json(const GraphModule& gm);
/// Writes `gm` to `path` atomically: a temporary file in the same folder, then a rename.
Status save_graph_file(const GraphModule& gm, const std::string& path);

}  // namespace graft
