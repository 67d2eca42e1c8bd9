// Running a Lua pipeline on a graph file: `graft run`, and what `graft watch` and
// `graft partition` share with it.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "graft/lua/limits.hpp"
#include "graft/lua/sandbox.hpp"
#include "graft/lua/script_host.hpp"

namespace graft::cli {

struct RunOptions {
  std::string pipeline;
  std::string graph;
  std::string output;
  std::string report;  ///< JSON report path ("" = none)
  std::vector<std::string> roots;  ///< extra `require` roots
  lua::Limits limits{};
  std::uint64_t seed = 42;
  bool quiet = false;
  bool json = false;  ///< print the report as JSON instead of text
  double poll_seconds = 0.2;  ///< watch: polling interval when inotify is unavailable
  int max_runs = 0;  ///< watch: stop after this many runs (0 = forever; for tests)
};

/// The sandbox a script of `o.pipeline` runs in: limits, seed, roots (its directory, then
/// --script-root folders, then graft's shipped scripts), print to stderr.
lua::SandboxOptions sandbox_options(const RunOptions& o);

/// Adds the limit options shared by run and watch to `cmd`.
void add_limit_options(CLI::App& cmd, RunOptions& o);

/// The script host `o`'s pipeline runs in.
lua::ScriptHostOptions host_options(const RunOptions& o);
/// Runs once: the graph is loaded fresh, so a failed run never touches the output. Returns the
/// exit code; prints the report.
int run_once(lua::ScriptHost& host, const RunOptions& o, bool watching);

int cmd_run(const RunOptions& o);

}  // namespace graft::cli
