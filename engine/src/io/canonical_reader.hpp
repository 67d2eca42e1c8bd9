// Reading graph files in the canonical layout: a line at a time, large ones on four threads
// (docs/ARCHITECTURE.md, "The graph file and its parser").
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "graft/ir/graph_module.hpp"
#include "graft/status.hpp"

namespace graft::detail {

/// Reads `text` (followed by simdjson::SIMDJSON_PADDING readable bytes) if it is laid out as
/// graft writes files: the graph, or the first error in file order. nullopt if it is not (or
/// a line is not JSON on its own): the whole-document reader then reads it and reports syntax
/// errors with their line and column.
std::optional<Result<GraphModule>> parse_canonical(const char* text, std::size_t size, std::string_view source);

/// The same for the file at `path` when it is large enough for the threaded path, without
/// reading it whole: its node lines are streamed through one reused buffer. nullopt if it is
/// small, not canonical, or cannot be read: then the file is read whole as before, which also
/// reports why it could not be read.
std::optional<Result<GraphModule>> parse_canonical_file(const std::string& path);

}  // namespace graft::detail
