// `graft lint GRAPH`: check every invariant of the graph; exit 1 naming the first broken one.
#include <fmt/core.h>

#include "command.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/ir/lint.hpp"
#include "graph_loading.hpp"

namespace graft::cli {
namespace {

class LintCommand final : public Command {
 public:
  explicit LintCommand(CLI::App& parent)
      : Command(
            parent.add_subcommand("lint", "Check every invariant of the graph; exit 1 naming the first broken one")) {
    app().add_option("GRAPH", graph_, "graph file")->required();
    app().add_flag("-q,--quiet", quiet_, "print nothing when the graph is fine");
  }

  int run() override {
    Result<GraphModule> gm = load_graph_file(graph_);
    if (!gm) return report(gm.status());
    if (Status s = lint(*gm); !s) {
      s.diagnostic().file = graph_;
      return report(s);
    }
    if (!quiet_) fmt::print("{}: ok ({} nodes, {} modules)\n", graph_, gm->graph.size(), gm->modules.size());
    return 0;
  }

 private:
  std::string graph_;
  bool quiet_ = false;
};

}  // namespace

std::unique_ptr<Command> lint_command(CLI::App& app) { return std::make_unique<LintCommand>(app); }

}  // namespace graft::cli
