// `graft tree GRAPH`: the module hierarchy as a tree, each submodule call opened into its graph.
#include <fmt/core.h>

#include "command.hpp"
#include "graft/io/module_tree.hpp"
#include "graph_loading.hpp"
#include "whole_number.hpp"

namespace graft::cli {
namespace {

class TreeCommand final : public Command {
 public:
  explicit TreeCommand(CLI::App& parent)
      : Command(parent.add_subcommand(
            "tree",
            "Print the module hierarchy as a tree: each node with its shape, and under each call of a submodule "
            "that has its own graph (python3 -m graft_fx export --hierarchy), that graph's nodes")) {
    app().add_option("GRAPH", graph_, "graph file")->required();
    app()
        .add_option("--depth", options_.max_depth, "submodule levels to open (0: the root graph only; default: all)")
        ->check(whole_number());
    app().add_flag("--no-shapes", no_shapes_, "names only, without the recorded shapes");
    app().add_option("--at", options_.at,
                     "start at this node path: a node of the root graph, or through calls into submodule graphs "
                     "(linear_0.output, encoder.layers.encoder_layer_0.mlp)");
    add_no_lint_flag(app(), no_lint_);
  }

  int run() override {
    options_.shapes = !no_shapes_;
    Result<GraphModule> gm = load_linted(graph_, no_lint_);
    if (!gm) return report(gm.status());
    Result<std::string> tree = module_tree(gm.value(), options_);
    if (!tree) {
      Status s = tree.status();
      s.diagnostic().file = graph_;
      return report(s);
    }
    fmt::print("{}", tree.value());
    return 0;
  }

 private:
  std::string graph_;
  ModuleTreeOptions options_;
  bool no_shapes_ = false, no_lint_ = false;
};

}  // namespace

std::unique_ptr<Command> tree_command(CLI::App& app) { return std::make_unique<TreeCommand>(app); }

}  // namespace graft::cli
