// `graft pass NAME GRAPH -o OUT [--option KEY=VALUE]...`: one built-in pass of the registry
// (graft/passes/pass_registry.hpp) on a graph file; `graft pass --list [--markdown]` lists them.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "output_paths.hpp"

namespace graft::cli {

class PassCommand {
 public:
  /// Declares the subcommand on `app`.
  explicit PassCommand(CLI::App& app);
  [[nodiscard]] bool chosen() const { return command_->parsed(); }
  /// The files the command reads and writes, for check_output_paths.
  void paths(std::vector<PathUse>& outputs, std::vector<PathUse>& inputs) const;
  [[nodiscard]] bool json_to_stdout() const { return json_; }
  [[nodiscard]] int run() const;

 private:
  CLI::App* command_;
  std::string name_, graph_, output_;
  std::vector<std::string> options_;
  bool list_ = false, markdown_ = false, json_ = false;
};

}  // namespace graft::cli
