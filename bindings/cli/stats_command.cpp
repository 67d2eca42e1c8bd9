// `graft stats GRAPH`: node counts by kind and target, modules, parameters.
#include <fmt/core.h>

#include "command.hpp"
#include "graft/io/stats.hpp"
#include "graph_loading.hpp"

namespace graft::cli {
namespace {

class StatsCommand final : public Command {
 public:
  explicit StatsCommand(CLI::App& parent)
      : Command(
            parent.add_subcommand("stats", "Summarise a graph: node counts by kind and target, modules, parameters")) {
    app().add_option("GRAPH", graph_, "graph file")->required();
    app().add_flag("--json", json_, "print the counts as JSON");
    add_no_lint_flag(app(), no_lint_);
  }

  int run() override {
    Result<GraphModule> gm = load_linted(graph_, no_lint_);
    if (!gm) return report(gm.status());
    const GraphStats stats = compute_stats(gm.value());
    if (json_) fmt::print("{}", stats.to_json());
    else fmt::print("{}\n{}", graph_, stats.to_text());
    return 0;
  }

 private:
  std::string graph_;
  bool json_ = false, no_lint_ = false;
};

}  // namespace

std::unique_ptr<Command> stats_command(CLI::App& app) { return std::make_unique<StatsCommand>(app); }

}  // namespace graft::cli
