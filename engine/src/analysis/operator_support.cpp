// Support rules as a small tree, evaluated per node.
#include "graft/analysis/operator_support.hpp"

#include <algorithm>
#include <unordered_set>

#include "graft/ir/target_name.hpp"

namespace graft {

struct OperatorSupport::Rule {
  enum class Kind { Targets, DeclineNames, Predicate, Chain, AnyChain, Negate };
  Kind kind;
  std::string name;
  std::unordered_set<std::string> strings;  // Targets, DeclineNames
  Predicate predicate;
  bool predicate_by_target = false;
  std::vector<OperatorSupport> children;  // Chain, AnyChain, Negate
};

namespace {

bool contains(const std::unordered_set<std::string>& set, std::string_view key) {
  return set.find(std::string(key)) != set.end();
}

}  // namespace

std::string_view support_name(const Graph& g, const ModuleTable* modules, NodeId n) {
  if (g.op(n) == OpKind::CallModule && modules != nullptr) {
    if (const ModuleInfo* m = modules->find(g.target(n)); m && !m->class_name.empty()) return m->class_name;
  }
  return g.target(n);
}

OperatorSupport OperatorSupport::targets(std::string name, std::vector<std::string> targets) {
  auto r = std::make_shared<Rule>(Rule{Rule::Kind::Targets, std::move(name), {}, {}, false, {}});
  for (std::string& t : targets) {
    r->strings.emplace(fx_target_name(t));  // `torch.nn.functional.linear` is recorded as `torch._C._nn.linear`
    r->strings.insert(std::move(t));
  }
  return OperatorSupport(std::move(r));
}

OperatorSupport OperatorSupport::decline_names(std::string name, std::vector<std::string> names) {
  auto r = std::make_shared<Rule>(Rule{Rule::Kind::DeclineNames, std::move(name), {}, {}, false, {}});
  r->strings.insert(names.begin(), names.end());
  return OperatorSupport(std::move(r));
}

OperatorSupport OperatorSupport::predicate(std::string name, Predicate predicate, bool depends_on_target) {
  return OperatorSupport(std::make_shared<Rule>(
      Rule{Rule::Kind::Predicate, std::move(name), {}, std::move(predicate), depends_on_target, {}}));
}

OperatorSupport OperatorSupport::chain(std::string name, std::vector<OperatorSupport> rules) {
  return OperatorSupport(
      std::make_shared<Rule>(Rule{Rule::Kind::Chain, std::move(name), {}, {}, false, std::move(rules)}));
}

OperatorSupport OperatorSupport::any_chain(std::string name, std::vector<OperatorSupport> rules) {
  return OperatorSupport(
      std::make_shared<Rule>(Rule{Rule::Kind::AnyChain, std::move(name), {}, {}, false, std::move(rules)}));
}

OperatorSupport OperatorSupport::negate(std::string name, OperatorSupport rule) {
  return OperatorSupport(
      std::make_shared<Rule>(Rule{Rule::Kind::Negate, std::move(name), {}, {}, false, {std::move(rule)}}));
}

const std::string& OperatorSupport::name() const { return rule_->name; }

bool OperatorSupport::depends_only_on_target() const {
  switch (rule_->kind) {
    case Rule::Kind::Targets: return true;
    case Rule::Kind::DeclineNames: return false;
    case Rule::Kind::Predicate: return rule_->predicate_by_target;
    default:
      return std::all_of(rule_->children.begin(), rule_->children.end(),
                         [](const OperatorSupport& c) { return c.depends_only_on_target(); });
  }
}

SupportVerdict OperatorSupport::decide(const Graph& g, const ModuleTable* modules, NodeId n) const {
  const Rule& r = *rule_;
  switch (r.kind) {
    case Rule::Kind::Targets: {
      bool ok = contains(r.strings, support_name(g, modules, n)) ||
          (g.op(n) == OpKind::CallModule && contains(r.strings, g.target(n)));
      return {ok, r.name};
    }
    case Rule::Kind::DeclineNames: return {!contains(r.strings, g.name(n)), r.name};
    case Rule::Kind::Predicate: return {r.predicate(g, modules, n), r.name};
    case Rule::Kind::Chain:
      for (const OperatorSupport& c : r.children) {
        SupportVerdict v = c.decide(g, modules, n);
        if (!v.supported) return v;
      }
      return {true, r.name};
    case Rule::Kind::AnyChain:
      for (const OperatorSupport& c : r.children) {
        SupportVerdict v = c.decide(g, modules, n);
        if (v.supported) return v;
      }
      return {false, r.name};
    case Rule::Kind::Negate: {
      SupportVerdict v = r.children.front().decide(g, modules, n);
      return {!v.supported, v.supported ? r.name : v.rule};
    }
  }
  return {false, r.name};
}

}  // namespace graft
