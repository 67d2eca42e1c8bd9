// `graft dot GRAPH -o OUT`: draw the graph as Graphviz DOT, or SVG; `--partition SUPPORT.lua`
// colours the partitions a support script finds.
#include "command.hpp"
#include "graft/io/atomic_file.hpp"
#include "graft/io/dot.hpp"
#include "graph_loading.hpp"
#include "graphviz.hpp"
#include "partition_command.hpp"

namespace graft::cli {
namespace {

class DotCommand final : public Command {
 public:
  explicit DotCommand(CLI::App& parent)
      : Command(parent.add_subcommand("dot",
                                      "Draw the graph: Graphviz DOT, or SVG when OUT ends in .svg (needs Graphviz)")) {
    app().add_option("GRAPH", graph_, "graph file")->required();
    app().add_option("-o,--output", output_, "output file (.dot or .svg; '-': DOT on stdout)")->required();
    add_no_lint_flag(app(), no_lint_);
    app().add_option("--partition", support_,
                     "colour the partitions of this support script (as graft partition finds them), with a legend");
  }

  void paths(std::vector<PathUse>& outputs, std::vector<PathUse>& inputs) const override {
    outputs.push_back({"-o", output_});
    inputs.push_back({"GRAPH", graph_});
    if (!support_.empty()) inputs.push_back({"--partition", support_});
  }

  int run() override {
    if (!support_.empty()) {
      PartitionCommandOptions o;
      o.script.pipeline = support_;
      o.script.graph = graph_;
      o.dot = output_;
      o.quiet = true;
      return cmd_partition(o);
    }
    Result<GraphModule> gm = load_linted(graph_, no_lint_);
    if (!gm) return report(gm.status());
    const std::string dot = to_dot(gm->graph);
    const Status s = output_.ends_with(".svg") ? render_svg(dot, output_) : write_output_file(output_, dot);
    return s ? 0 : report(s);
  }

 private:
  std::string graph_, output_, support_;
  bool no_lint_ = false;
};

}  // namespace

std::unique_ptr<Command> dot_command(CLI::App& app) { return std::make_unique<DotCommand>(app); }

}  // namespace graft::cli
