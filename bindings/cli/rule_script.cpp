// The rule-script forms of `graft match` and `graft explain`, and `graft pattern`.
#include "rule_script.hpp"

#include <iterator>

#include <fmt/core.h>

#include "graft/io/tabular.hpp"
#include "graft/lua/rules.hpp"
#include "graft/match/describe_failure.hpp"
#include "node_lookup.hpp"
#include "pattern_file.hpp"
#include "print_error.hpp"

namespace graft::cli {
namespace {

/// The rules `o.rule` selects: that one, or (when empty) every enabled one; an unknown name
/// is an error listing the names there are.
Result<std::vector<const lua::RuleView*>> select(const std::vector<lua::RuleView>& rules, const RulesCommandOptions& o,
                                                 bool only_one) {
  std::vector<const lua::RuleView*> out;
  std::string names;
  for (const lua::RuleView& r : rules) {
    names += (names.empty() ? "" : ", ") + r.name;
    if (o.rule.empty() ? r.enabled : r.name == o.rule) out.push_back(&r);
  }
  if (!o.rule.empty() && out.empty())
    return Status::error(fmt::format("{}: no rule named '{}' (rules: {})", o.script.pipeline, o.rule, names));
  if (only_one && o.rule.empty() && rules.size() != 1)
    return Status::error(
        fmt::format("{} has {} rules; say which with --rule NAME (rules: {})", o.script.pipeline, rules.size(), names));
  if (only_one && o.rule.empty()) out = {&rules.front()};
  return out;
}

/// Loads the script and (unless `graph_path` is empty) the graph, then runs `body` inside the
/// script's sandbox.
/// `body` writes its output into `out`, printed only when everything succeeded: a predicate
/// that raised makes the matches seen so far meaningless.
int with_script(
    const RulesCommandOptions& o, bool needs_graph,
    const std::function<Status(const std::vector<lua::RuleView>&, const GraphModule*, std::string& out)>& body) {
  std::optional<GraphModule> gm;
  if (needs_graph) {
    Result<GraphModule> loaded = load_graph_file(o.script.graph);
    if (!loaded) return print_error(loaded.status().message());
    gm = std::move(loaded).value();
  }
  auto sandbox = lua::Sandbox::create(sandbox_options(o.script));
  if (!sandbox) return print_error(sandbox.status().message());
  if (Status s = sandbox.value()->load_file(o.script.pipeline); !s) return print_error(s.message());
  std::string out;
  Status s = lua::with_rules(*sandbox.value(), gm ? &*gm : nullptr, [&](const std::vector<lua::RuleView>& rules) {
    return body(rules, gm ? &*gm : nullptr, out);
  });
  if (!s) return print_error(s.message());
  fmt::print("{}", out);
  return 0;
}

std::string constraint_text(const Graph& p, NodeId n, const NodeConstraint& c) {
  std::vector<std::string> parts;
  if (c.wildcard) parts.push_back("wildcard (any argument)");
  if (!c.module_class.empty()) parts.push_back("any module of class " + c.module_classes_text());
  if (!c.alternatives.empty()) {
    std::string alts = p.target(n);
    for (const std::string& a : c.alternatives) alts += ", " + a;
    parts.push_back("one of " + alts);
  }
  if (c.commutative) parts.push_back("commutative");
  if (c.users) parts.push_back(fmt::format("exactly {} user{}", *c.users, *c.users == 1 ? "" : "s"));
  if (!c.optional_kwargs.empty()) {
    std::string kws;
    for (const std::string& k : c.optional_kwargs) kws += (kws.empty() ? "" : ", ") + k;
    parts.push_back("may omit " + kws);
  }
  if (c.predicate)
    parts.push_back("predicate '" + (c.predicate_name.empty() ? std::string("where") : c.predicate_name) + "'");
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : "; ") + part;
  return text;
}

}  // namespace

int cmd_match_rules(const RulesCommandOptions& o) {
  return with_script(
      o, true, [&](const std::vector<lua::RuleView>& rules, const GraphModule* gm, std::string& out) -> Status {
        Result<std::vector<const lua::RuleView*>> chosen = select(rules, o, false);
        if (!chosen) return chosen.status();
        Json j;
        j["rules_script"] = o.script.pipeline;
        j["graph"] = o.script.graph;
        Json& list = j["rules"] = Json::array();
        for (const lua::RuleView* r : chosen.value()) {
          std::vector<SubgraphMatch> matches = r->matcher->match(*gm);
          // The rule's filter decides which matches it would rewrite; refused ones are listed apart.
          std::vector<SubgraphMatch> refused;
          if (r->filter) {
            std::vector<SubgraphMatch> kept;
            for (SubgraphMatch& m : matches) (r->filter(m, gm->graph) ? kept : refused).push_back(std::move(m));
            matches = std::move(kept);
          }
          if (o.json) {
            Json e;
            e["name"] = r->name;
            e["priority"] = r->priority;
            e["count"] = matches.size();
            e["matches"] = matches_json(*r->matcher, gm->graph, matches);
            e["refused_by_filter"] = matches_json(*r->matcher, gm->graph, refused);
            if (o.log) e["candidates"] = explanations_json(*r->matcher, *gm, r->matcher->explain(*gm));
            list.push_back(std::move(e));
            continue;
          }
          out += fmt::format(
              "rule {}: {} match{}{}\n", r->name, matches.size(), matches.size() == 1 ? "" : "es",
              refused.empty() ? std::string() : fmt::format(" ({} more refused by its filter)", refused.size()));
          print_matches(*r->matcher, gm->graph, matches, out);
          if (!refused.empty() && o.log) {
            out += "  refused by the filter:\n";
            print_matches(*r->matcher, gm->graph, refused, out);
          }
          if (o.log) out += explanations_text(*r->matcher, *gm, r->matcher->explain(*gm), o.script.graph, "    ");
        }
        if (o.json) out += j.dump(2) + "\n";
        return Status::ok();
      });
}

int cmd_explain_rules(const RulesCommandOptions& o) {
  return with_script(o, true,
                     [&](const std::vector<lua::RuleView>& rules, const GraphModule* gm, std::string& out) -> Status {
                       Result<std::vector<const lua::RuleView*>> chosen = select(rules, o, true);
                       if (!chosen) return chosen.status();
                       const lua::RuleView& r = *chosen.value().front();
                       NodeId only = kNoNode;
                       if (!o.node.empty()) {
                         Result<NodeId> found = find_root_node(*gm, o.node, o.script.graph);
                         if (!found) return found.status();
                         only = found.value();
                       }
                       std::vector<MatchExplanation> all = r.matcher->explain(*gm, only);
                       if (o.json) {
                         Json j;
                         j["rule"] = r.name;
                         j["candidates"] = explanations_json(*r.matcher, *gm, all);
                         out += j.dump(2) + "\n";
                         return Status::ok();
                       }
                       out += "rule " + r.name + ":\n";
                       out += explanations_text(*r.matcher, *gm, all, o.script.graph, "  ");
                       return Status::ok();
                     });
}

int cmd_pattern(const RulesCommandOptions& o) {
  return with_script(
      o, false, [&](const std::vector<lua::RuleView>& rules, const GraphModule*, std::string& out) -> Status {
        Result<std::vector<const lua::RuleView*>> chosen = select(rules, o, false);
        if (!chosen) return chosen.status();
        if (o.rule.empty()) {  // every rule, disabled ones too
          chosen.value().clear();
          for (const lua::RuleView& r : rules) chosen.value().push_back(&r);
        }
        for (const lua::RuleView* r : chosen.value()) {
          const Graph& p = r->matcher->pattern();
          out += fmt::format("rule {} (priority {}{})\n", r->name, r->priority, r->enabled ? "" : ", disabled");
          out += tabular(p);
          for (const auto& [n, c] : r->matcher->constrained_pattern().constraints)
            if (c.any()) out += fmt::format("  {}: {}\n", p.name(n), constraint_text(p, n, c));
        }
        return Status::ok();
      });
}

}  // namespace graft::cli
