// How the command line reports a failure.
#pragma once

#include <string_view>

namespace graft::cli {

inline constexpr int kExitError = 1;

/// Writes `graft: error: MESSAGE` and a line break on stderr, the message escaped with
/// escape_message: control characters and bidirectional-text controls it quotes from an input
/// cannot forge or reorder lines in a log. Returns kExitError.
int print_error(std::string_view message);

}  // namespace graft::cli
