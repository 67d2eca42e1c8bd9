// `graft print GRAPH`: the graph as a table, like torch.fx's print_tabular, then each
// submodule's own graph.
#include <fmt/core.h>

#include "command.hpp"
#include "graft/io/graph_text.hpp"
#include "graft/io/tabular.hpp"
#include "graph_loading.hpp"

namespace graft::cli {
namespace {

class PrintCommand final : public Command {
 public:
  explicit PrintCommand(CLI::App& parent)
      : Command(parent.add_subcommand(
            "print", "Print the graph as a table, like torch.fx's print_tabular; then each submodule's own graph")) {
    app().add_option("GRAPH", graph_, "graph file")->required();
    app().add_flag("--values", values_,
                   "add a column with each node's recorded shape and dtype (float32[1, 64, 56, 56])");
    app()
        .add_flag("--text", text_, "one line per node: name = op target(args, key=value) (docs/FORMAT.md)")
        ->excludes("--values");
    add_no_lint_flag(app(), no_lint_);
  }

  int run() override {
    Result<GraphModule> gm = load_linted(graph_, no_lint_);
    if (!gm) return report(gm.status());
    fmt::print("{}", text_ ? to_graph_text(gm->graph) : tabular(gm->graph, values_));
    // Submodules with their own graph (a hierarchy, fused partitions): each after the root's.
    for (const ModuleInfo& m : gm->modules.entries()) {
      if (!m.graph) continue;
      fmt::print("\nmodule '{}' ({}):\n{}", m.path, m.class_name,
                 text_ ? to_graph_text(*m.graph) : tabular(*m.graph, values_));
    }
    return 0;
  }

 private:
  std::string graph_;
  bool values_ = false, text_ = false, no_lint_ = false;
};

}  // namespace

std::unique_ptr<Command> print_command(CLI::App& app) { return std::make_unique<PrintCommand>(app); }

}  // namespace graft::cli
