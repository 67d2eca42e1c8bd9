// Whole-file reads and atomic writes (temp file + rename): a failed write leaves nothing behind.
#pragma once

#include <string>
#include <string_view>

#include "graft/status.hpp"

namespace graft {

Result<std::string> read_file(const std::string& path);
/// Writes `content` to `path` through a temporary file in the same folder and a rename,
/// so readers see the old file or the new one, never a half-written one.
Status write_file_atomic(const std::string& path, std::string_view content);

}  // namespace graft
