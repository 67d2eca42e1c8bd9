// `graft explain RULES.lua GRAPH` or `graft explain --pattern P.json GRAPH`: for each candidate
// anchor, whether the rule matches there or the first reason it does not.
#include "command.hpp"
#include "pattern_file.hpp"
#include "rule_script.hpp"

namespace graft::cli {
namespace {

class ExplainCommand final : public Command {
 public:
  explicit ExplainCommand(CLI::App& parent)
      : Command(parent.add_subcommand("explain",
                                      "For each candidate anchor of a rule (or pattern file), show whether it "
                                      "matches there or the first reason it does not")) {
    app().add_option("INPUTS", inputs_, "RULES.lua GRAPH, or GRAPH with --pattern")->required()->expected(1, 2);
    app().add_option("--pattern", file_.pattern, "graph file of a pattern instead of a rule script");
    app().add_option("--rule", rules_.rule, "the rule to explain (needed when the script has several)");
    app().add_option("--node", node_,
                     "explain only this node (by name, or by node path in the root graph), whatever its target");
    app().add_flag("--json", file_.json, "print the explanations as JSON");
    app().add_flag("--match-placeholder", file_.match.match_placeholder,
                   "pattern file: pattern inputs match only graph inputs");
    app().add_flag("--ignore-literals", file_.match.ignore_literals,
                   "pattern file: literals in the pattern match anything");
    app().add_flag("--modules-by-class", file_.modules_by_class,
                   "pattern file: its module calls match modules of the same class");
    add_limit_options(app(), rules_.script);
  }

  int run() override {
    if (!inputs_fit("explain", inputs_, !file_.pattern.empty(), rules_.rule)) return kExitUsage;
    if (!file_.pattern.empty()) {
      file_.graph = inputs_[0];
      return cmd_explain(file_, node_);
    }
    rules_.script.pipeline = inputs_[0];
    rules_.script.graph = inputs_[1];
    rules_.json = file_.json;
    rules_.node = node_;
    return cmd_explain_rules(rules_);
  }

 private:
  std::vector<std::string> inputs_;
  std::string node_;
  MatchCommandOptions file_;
  RulesCommandOptions rules_;
};

}  // namespace

std::unique_ptr<Command> explain_command(CLI::App& app) { return std::make_unique<ExplainCommand>(app); }

}  // namespace graft::cli
