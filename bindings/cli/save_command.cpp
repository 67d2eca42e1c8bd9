// `graft save GRAPH -o OUT`: load a graph file and write it back in canonical form.
#include "command.hpp"
#include "graft/io/graph_json.hpp"
#include "graph_loading.hpp"

namespace graft::cli {
namespace {

class SaveCommand final : public Command {
 public:
  explicit SaveCommand(CLI::App& parent)
      : Command(parent.add_subcommand("save", "Load a graph file and write it back in canonical form")) {
    app().add_option("GRAPH", graph_, "graph file")->required();
    app().add_option("-o,--output", output_, "output graph file ('-': stdout)")->required();
    add_no_lint_flag(app(), no_lint_);
  }

  void paths(std::vector<PathUse>& outputs, std::vector<PathUse>& inputs) const override {
    outputs.push_back({"-o", output_, true});
    inputs.push_back({"GRAPH", graph_, true});  // `graft save g.json -o g.json` rewrites it in canonical form
  }

  int run() override {
    Result<GraphModule> gm = load_linted(graph_, no_lint_);
    if (!gm) return report(gm.status());
    const Status s = save_graph_file(gm.value(), output_);
    return s ? 0 : report(s);
  }

 private:
  std::string graph_, output_;
  bool no_lint_ = false;
};

}  // namespace

std::unique_ptr<Command> save_command(CLI::App& app) { return std::make_unique<SaveCommand>(app); }

}  // namespace graft::cli
