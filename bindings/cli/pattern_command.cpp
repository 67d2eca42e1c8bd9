// `graft pattern RULES.lua`: the traced pattern graph of a rule script's rules, with their
// declared constraints.
#include "command.hpp"
#include "rule_script.hpp"

namespace graft::cli {
namespace {

class PatternCommand final : public Command {
 public:
  explicit PatternCommand(CLI::App& parent)
      : Command(parent.add_subcommand(
            "pattern", "Print the traced pattern graph of a rule script's rules, with their declared constraints")) {
    app()
        .add_option("RULES", rules_.script.pipeline, "Lua script returning graft.rules{...} or graft.rule{...}")
        ->required();
    app().add_option("--rule", rules_.rule, "only this rule (default: all, disabled ones too)");
    add_limit_options(app(), rules_.script);
  }

  int run() override { return cmd_pattern(rules_); }

 private:
  RulesCommandOptions rules_;
};

}  // namespace

std::unique_ptr<Command> pattern_command(CLI::App& app) { return std::make_unique<PatternCommand>(app); }

}  // namespace graft::cli
