// describe_failure: the sentences of `graft explain`.
#include "graft/match/describe_failure.hpp"

#include <fmt/core.h>

#include "graft/ir/python_repr.hpp"
#include "graft/match/close_targets.hpp"

namespace graft {

std::string describe_failure(const MatchFailure& f, NodeId candidate, const Graph& g, const SubgraphMatcher& matcher,
                             const ModuleTable* modules) {
  const Graph& p = matcher.pattern();
  auto gname = [&](NodeId n) { return n == kNoNode ? std::string("?") : g.name(n); };
  auto pname = [&](NodeId n) { return n == kNoNode ? std::string("?") : p.name(n); };
  auto lit = [&](const std::optional<Argument>& a) { return a ? format_argument(g, *a) : std::string("?"); };
  const std::string at = f.where.empty() ? gname(f.graph_node) : gname(f.graph_node) + " " + f.where;
  using K = MatchFailure::Kind;
  switch (f.kind) {
    case K::None: return gname(candidate) + ": matches";
    case K::WrongNode:
      if (const NodeConstraint* c = matcher.constraint(f.pattern_node); c != nullptr && !c->module_class.empty()) {
        const ModuleInfo* m = g.op(f.graph_node) == OpKind::CallModule && modules != nullptr
            ? modules->find(g.target(f.graph_node))
            : nullptr;
        return fmt::format("{} is {} {}{}, the pattern's '{}' wants a module of class {}", gname(f.graph_node),
                           op_kind_name(g.op(f.graph_node)), g.target(f.graph_node),
                           m != nullptr ? " (" + m->class_name + ")" : std::string(), pname(f.pattern_node),
                           c->module_classes_text());
      }
      {
        // Every target the pattern node accepts (graft.one_of, inductor's list of functions).
        std::string targets = p.target(f.pattern_node);
        if (const NodeConstraint* c = matcher.constraint(f.pattern_node); c != nullptr)
          for (std::size_t i = 0; i < c->alternatives.size(); ++i)
            targets += (i + 1 == c->alternatives.size() ? " or " : ", ") + c->alternatives[i];
        return fmt::format("{} is {} {}, the pattern's '{}' is {} {}", gname(f.graph_node),
                           op_kind_name(g.op(f.graph_node)), g.target(f.graph_node), pname(f.pattern_node),
                           op_kind_name(p.op(f.pattern_node)), targets);
      }
    case K::AlreadyBound:
      return fmt::format("{}: pattern input '{}' is already bound to {}, found {}", at, pname(f.pattern_node),
                         f.expected ? lit(f.expected) : gname(f.other), f.found ? lit(f.found) : gname(f.graph_node));
    case K::NotInjective:
      return fmt::format("{} is already matched to pattern node '{}', so it cannot also be '{}'", gname(f.graph_node),
                         pname(f.other), pname(f.pattern_node));
    case K::ArgumentShape:
      return fmt::format(
          "{}: its arguments are spelled differently from the pattern's '{}' ({}{}), and no operator "
          "schema reconciles them",
          at, pname(f.pattern_node), format_args(g, f.graph_node), "");
    case K::LiteralMismatch: return fmt::format("{}: expected literal {}, found {}", at, lit(f.expected), lit(f.found));
    case K::NodeVsLiteral:
      return fmt::format("{}: expected a node (pattern '{}'), found literal {}", at, pname(f.pattern_node),
                         lit(f.found));
    case K::LiteralVsNode:
      return fmt::format("{}: expected literal {}, found node {}", at, lit(f.expected), gname(f.other));
    case K::LengthMismatch: return fmt::format("{}: expected {}, found {}", at, lit(f.expected), lit(f.found));
    case K::UsedOutside: return fmt::format("{} is used by {} outside the match", gname(f.graph_node), gname(f.other));
    case K::Cycle: return fmt::format("fusing would create a cycle through {}", gname(f.other));
    case K::Users: {
      const NodeConstraint* c = matcher.constraint(f.pattern_node);
      return fmt::format("{} has {} user{}, the pattern's '{}' wants exactly {}", gname(f.graph_node),
                         g.users(f.graph_node).size(), g.users(f.graph_node).size() == 1 ? "" : "s",
                         pname(f.pattern_node), c && c->users ? *c->users : 0);
    }
    case K::Predicate: {
      const NodeConstraint* c = matcher.constraint(f.pattern_node);
      const std::string name = c && !c->predicate_name.empty() ? " '" + c->predicate_name + "'" : std::string();
      return fmt::format("{}: the pattern's '{}' predicate{} is false for it", gname(f.graph_node),
                         pname(f.pattern_node), name);
    }
    case K::NoModules:
      return fmt::format("the pattern's '{}' matches modules by class, and the graph came without a module table",
                         pname(f.pattern_node));
    case K::OtherAnchors:
      return fmt::format("{}: the pattern's first output matches here, its other outputs were not found with it",
                         gname(candidate));
  }
  return "?";
}

std::string explanations_text(const SubgraphMatcher& matcher, const GraphModule& gm,
                              const std::vector<MatchExplanation>& all, std::string_view graph_label,
                              std::string_view indent) {
  std::string out;
  const Graph& g = gm.graph;
  if (all.empty()) {
    const Graph& p = matcher.pattern();
    const NodeId a = matcher.anchors().front();
    const NodeConstraint* c = matcher.constraint(a);
    const std::string what = c != nullptr && !c->module_class.empty()
        ? "a module of class " + c->module_classes_text()
        : std::string(op_kind_name(p.op(a))) + " " + p.target(a);
    out +=
        fmt::format("{}no candidate in {}: no node is what the pattern's output is ({})\n", indent, graph_label, what);
    if (c == nullptr || c->module_class.empty()) {
      for (const CloseTarget& t : close_targets(g, p.op(a), p.target(a)))
        out += fmt::format("{}  did you mean {} {}? ({})\n", indent, op_kind_name(t.op), t.target, t.why);
    }
    return out;
  }
  for (const MatchExplanation& e : all) {
    if (e.failure.kind == MatchFailure::Kind::None) out += fmt::format("{}{}: matches\n", indent, g.name(e.candidate));
    else
      out += fmt::format("{}{}: no match (matched {} of {} pattern nodes): {}\n", indent, g.name(e.candidate),
                         e.failure.matched, matcher.compute_nodes(),
                         describe_failure(e.failure, e.candidate, gm, matcher));
  }
  return out;
}

}  // namespace graft
