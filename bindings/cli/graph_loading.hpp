// Reading the graph a command inspects: refused when graft lint rejects it, unless --no-lint.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "graft/ir/graph_module.hpp"
#include "graft/status.hpp"

namespace graft::cli {

/// Loads `path` and, unless `no_lint`, refuses a graph that graft lint rejects: stats, pictures
/// and copies of a broken graph would pass it on without a word.
Result<GraphModule> load_linted(const std::string& path, bool no_lint);

/// Adds `--no-lint` to `cmd`.
void add_no_lint_flag(CLI::App& cmd, bool& no_lint);

/// Prints `s`'s error (print_error) and returns the exit status for it.
int report(const Status& s);

}  // namespace graft::cli
