// Whole-file reads, and output files written so that a failure loses nothing: a regular file is
// replaced atomically (temporary file + rename), anything else is written straight into.
#pragma once

#include <string>
#include <string_view>

#include "graft/status.hpp"

namespace graft {

Result<std::string> read_file(const std::string& path);

/// What writing to a path will do, decided before any work is done.
struct OutputPath {
  enum class Kind {
    ReplaceFile,  ///< a regular file, new or existing: temporary file beside it, then rename
    WriteInPlace,  ///< a device, FIFO or socket: opened and written directly, never replaced
    Stdout,  ///< `-`
  };
  Kind kind = Kind::ReplaceFile;
  std::string path;  ///< symlinks followed: the file that will change
};

/// Follows symlinks (as `cp` and compilers do, a symlink's target is what gets replaced) and
/// refuses, naming the path, a folder, a missing parent folder, or a place that is not
/// writable. Commands call it on every output before loading anything.
Result<OutputPath> check_output_path(const std::string& path);

/// Writes `content` to `path` as check_output_path describes: readers of a regular file see
/// the old one or the whole new one (mode kept), never a half-written one.
Status write_output_file(const std::string& path, std::string_view content);

}  // namespace graft
