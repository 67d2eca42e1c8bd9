// The files a command reads and writes, checked against each other before any work.
#pragma once

#include <string>
#include <vector>

#include "graft/status.hpp"

namespace graft::cli {

/// A path given on the command line, with the option that gave it (`-o`, `--dot`, `GRAPH`).
struct PathUse {
  std::string option;
  std::string path;
  /// An output: it writes a graph. An input: it is the graph the command edits, which a graph
  /// output may replace (outputs are written whole to a temporary file and renamed over, after
  /// the input was read: `graft save g.json -o g.json` rewrites g.json in canonical form).
  bool graph = false;
};

/// Checks each output as check_output_path does, then refuses two outputs that are one file,
/// however spelt (`X`, `./X`, `d/../X`, a symbolic link to it, a hard link), since the later
/// write would replace the earlier; and an output that is one of the inputs, unless a graph
/// output replaces the edited graph. Devices and FIFOs are written into, never replaced: two
/// outputs may share one (`/dev/null`). `-` is not a file here (one output on stdout is the
/// caller's check).
Status check_output_paths(const std::vector<PathUse>& outputs, const std::vector<PathUse>& inputs);

}  // namespace graft::cli
