// `graft match RULES.lua GRAPH` (a rule script's rules) or `graft match --pattern P.json GRAPH`
// (a pattern graph file): list the matches.
#include "command.hpp"
#include "pattern_file.hpp"
#include "rule_script.hpp"

namespace graft::cli {
namespace {

class MatchCommand final : public Command {
 public:
  explicit MatchCommand(CLI::App& parent)
      : Command(parent.add_subcommand(
            "match", "List the matches of a rule script's rules (or of a pattern graph file) in a graph")) {
    app().add_option("INPUTS", inputs_, "RULES.lua GRAPH, or GRAPH with --pattern")->required()->expected(1, 2);
    app().add_option("--pattern", file_.pattern,
                     "graph file of a pattern (export a function with graft_fx) instead of a rule script");
    app().add_option("--rule", rules_.rule, "only this rule (default: every enabled rule)");
    app().add_flag("--log", rules_.log, "also show the matcher's decision for every candidate: matches, or why not");
    app().add_flag("--json", file_.json, "print the matches as JSON");
    app().add_flag("--match-output", file_.match.match_output,
                   "pattern file: the pattern's output must be the graph's output");
    app().add_flag("--match-placeholder", file_.match.match_placeholder,
                   "pattern file: pattern inputs match only graph inputs");
    app().add_flag("--ignore-literals", file_.match.ignore_literals,
                   "pattern file: literals in the pattern match anything");
    app().add_flag("--modules-by-class", file_.modules_by_class,
                   "pattern file: its module calls match modules of the same class, wherever they are");
    app().add_flag("--keep-overlapping", keep_overlapping_,
                   "pattern file: keep matches that share nodes (default: the earliest anchor wins)");
    add_limit_options(app(), rules_.script);
  }

  int run() override {
    if (!inputs_fit("match", inputs_, !file_.pattern.empty(), rules_.rule)) return kExitUsage;
    if (!file_.pattern.empty()) {
      file_.graph = inputs_[0];
      file_.log = rules_.log;
      file_.match.remove_overlapping_matches = !keep_overlapping_;
      return cmd_match(file_);
    }
    rules_.script.pipeline = inputs_[0];
    rules_.script.graph = inputs_[1];
    rules_.json = file_.json;
    return cmd_match_rules(rules_);
  }

 private:
  std::vector<std::string> inputs_;
  MatchCommandOptions file_;
  RulesCommandOptions rules_;
  bool keep_overlapping_ = false;
};

}  // namespace

std::unique_ptr<Command> match_command(CLI::App& app) { return std::make_unique<MatchCommand>(app); }

}  // namespace graft::cli
