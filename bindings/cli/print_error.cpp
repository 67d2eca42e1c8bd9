// How the command line reports a failure.
#include "print_error.hpp"

#include <fmt/core.h>

#include "graft/status.hpp"

namespace graft::cli {

int print_error(std::string_view message) {
  fmt::print(stderr, "graft: error: {}\n", escape_message(message));
  return kExitError;
}

}  // namespace graft::cli
