// The one list of `graft`'s subcommands; each is defined in its own NAME_command.cpp.
#include "command.hpp"

namespace graft::cli {

std::unique_ptr<Command> print_command(CLI::App& app);
std::unique_ptr<Command> stats_command(CLI::App& app);
std::unique_ptr<Command> tree_command(CLI::App& app);
std::unique_ptr<Command> lint_command(CLI::App& app);
std::unique_ptr<Command> dot_command(CLI::App& app);
std::unique_ptr<Command> save_command(CLI::App& app);
std::unique_ptr<Command> run_command(CLI::App& app);
std::unique_ptr<Command> watch_command(CLI::App& app);
std::unique_ptr<Command> match_command(CLI::App& app);
std::unique_ptr<Command> explain_command(CLI::App& app);
std::unique_ptr<Command> pattern_command(CLI::App& app);
std::unique_ptr<Command> rewrite_command(CLI::App& app);
std::unique_ptr<Command> pass_command(CLI::App& app);
std::unique_ptr<Command> partition_command(CLI::App& app);
std::unique_ptr<Command> verify_command(CLI::App& app);
std::unique_ptr<Command> plan_command(CLI::App& app);

std::vector<std::unique_ptr<Command>> declare_commands(CLI::App& app) {
  std::vector<std::unique_ptr<Command>> all;
  for (auto* declare : {print_command, stats_command, tree_command, lint_command, dot_command, save_command,
                        run_command, watch_command, match_command, explain_command, pattern_command, rewrite_command,
                        pass_command, partition_command, verify_command, plan_command})
    all.push_back(declare(app));
  return all;
}

}  // namespace graft::cli
