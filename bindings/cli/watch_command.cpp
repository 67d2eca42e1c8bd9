// `graft watch PIPELINE.lua GRAPH -o OUT`: rerun a pipeline every time it (or a module it
// requires) is saved; a broken save is reported and the last good version keeps serving.
#include <chrono>
#include <cstdio>
#include <limits>

#include <fmt/core.h>

#include "command.hpp"
#include "print_error.hpp"
#include "run_command.hpp"
#include "whole_number.hpp"

namespace graft::cli {
namespace {

int cmd_watch(const RunOptions& o) {
  lua::ScriptHostOptions options = host_options(o);
  lua::ScriptHost host(options);
  if (Status s = host.load(o.pipeline); !s) return print_error(s.message());
  fmt::print("watching {} ({}); Ctrl-C stops\n", o.pipeline, host.using_inotify() ? "inotify" : "polling");
  int runs = 1;
  run_once(host, o, true);
  while (o.max_runs == 0 || runs < o.max_runs) {
    // Look at the files after every wake-up and every second anyway: a watch can be lost (the
    // directory replaced by a checkout), and the stamps are what decide.
    host.wait_for_change(std::chrono::milliseconds(1000));
    for (const lua::ReloadEvent& ev : host.poll()) {
      if (!ev.ok) {
        fmt::print("v{} error: {} (still serving v{})\n", ev.attempt, ev.error->to_string(), ev.version);
        std::fflush(stdout);
        ++runs;
        continue;
      }
      run_once(host, o, true);
      ++runs;
    }
  }
  return 0;
}

class WatchCommand final : public Command {
 public:
  explicit WatchCommand(CLI::App& parent)
      : Command(parent.add_subcommand("watch", "Rerun a pipeline every time it (or a module it requires) is saved")) {
    app().add_option("PIPELINE", o_.pipeline, "Lua pipeline script")->required();
    app().add_option("GRAPH", o_.graph, "input graph file")->required();
    app().add_option("-o,--output", o_.output, "output graph file, rewritten after each good run")->required();
    app().add_option("--report", o_.report, "also write each run's report as JSON to this file");
    app()
        .add_option("--poll", o_.poll_seconds, "polling interval in seconds when inotify is unavailable")
        ->capture_default_str()
        ->check(CLI::Range(0.001, 86400.0));
    app()
        .add_option("--max-runs", o_.max_runs, "stop after this many runs (0: run until interrupted)")
        ->capture_default_str()
        ->check(whole_number(0, std::numeric_limits<int>::max()));
    add_limit_options(app(), o_);
  }

  void paths(std::vector<PathUse>& outputs, std::vector<PathUse>& inputs) const override {
    outputs.push_back({"-o", o_.output, true});
    if (!o_.report.empty()) outputs.push_back({"--report", o_.report});
    inputs.push_back({"PIPELINE", o_.pipeline});
    // watch runs the pipeline again on GRAPH after each save: its own output would pile up
    inputs.push_back({"GRAPH", o_.graph, false});
  }
  int run() override { return cmd_watch(o_); }

 private:
  RunOptions o_;
};

}  // namespace

std::unique_ptr<Command> watch_command(CLI::App& app) { return std::make_unique<WatchCommand>(app); }

}  // namespace graft::cli
