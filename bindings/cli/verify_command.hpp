// `graft verify`: checking rules in PyTorch is Python's job; this runs `python3 -m graft verify`
// with the graft Python package on the path.
#pragma once

#include <string>
#include <vector>

namespace graft::cli {

/// Replaces this process with `python3 -m graft verify ARGS...`; returns an exit code only if
/// that cannot start (printing why).
int cmd_verify(const std::vector<std::string>& args);

}  // namespace graft::cli
