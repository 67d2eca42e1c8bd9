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

namespace detail {
/// Canonical files of at least this many bytes (default 4 MiB) are read on four threads:
/// module table, two node parsers, graph building (files on disk are streamed, not read whole).
/// Tests lower it to run that path on small files. Returns the previous value.
std::size_t set_parallel_load_threshold(std::size_t bytes);
/// How many loads so far took the threaded path (tests check that they ran it).
std::size_t threaded_loads();
/// How many file loads so far were read with their node lines streamed from the file instead
/// of reading it whole first (canonical files past the threshold above; a file found not to be
/// canonical on the way is read whole after all, and not counted).
std::size_t streamed_loads();
/// Tests only: streamed reads that start at or after `bytes` find the end of the file, as if
/// another process cut it there after the earlier reads (the whole-file read is not affected).
/// Returns the previous value.
std::uint64_t set_stream_read_limit(std::uint64_t bytes);
}  // namespace detail

/// The canonical text of `gm` (docs/FORMAT.md §5). Fails if the graph refers to dead nodes.
Result<std::string> to_graph_json(const GraphModule& gm);
/// Writes `gm` to `path` atomically: a temporary file in the same folder, then a rename.
Status save_graph_file(const GraphModule& gm, const std::string& path);

}  // namespace graft
