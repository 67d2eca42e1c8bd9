// CandidateIndex: (op, target) lists built once; class and alternative lists derived lazily.
#include "graft/match/candidate_index.hpp"

#include <algorithm>

#include "graft/match/pattern.hpp"

namespace graft {

CandidateIndex::CandidateIndex(const Graph& g, const ModuleTable* modules) : g_(g), modules_(modules) {
  all_ = g.node_list();
  for (NodeId n : all_) {
    by_key_[key(g.op(n), g.target_symbol(n))].push_back(n);
    if (g.op(n) == OpKind::GetAttr) get_attrs_.push_back(n);
    if (g.op(n) == OpKind::CallModule) call_modules_.push_back(n);
  }
}

void CandidateIndex::node_inserted(const Graph& g, NodeId n) {
  if (&g != &g_) return;
  all_.push_back(n);
  by_key_[key(g_.op(n), g_.target_symbol(n))].push_back(n);
  if (g_.op(n) == OpKind::GetAttr) get_attrs_.push_back(n);
  if (g_.op(n) == OpKind::CallModule) call_modules_.push_back(n);
  derived_.clear();
}

const std::vector<NodeId>& CandidateIndex::by_target(OpKind op, const std::string& target) const {
  static const std::vector<NodeId> none;
  const Symbol s = g_.symbols().find(target);
  if (s == SymbolTable::kMissing) return none;
  auto it = by_key_.find(key(op, s));
  return it == by_key_.end() ? none : it->second;
}

const std::vector<NodeId>& CandidateIndex::find(const Graph& pattern, NodeId p, const NodeConstraint* c) const {
  static const std::vector<NodeId> none;
  const OpKind op = pattern.op(p);
  switch (op) {
    case OpKind::Placeholder: return all_;
    case OpKind::GetAttr: return get_attrs_;
    default: break;
  }
  if (c != nullptr && op == OpKind::CallModule && !c->module_class.empty()) {
    std::lock_guard lock(derived_mutex_.mutex);
    auto [it, fresh] = derived_.try_emplace("class " + c->module_classes_text());
    if (fresh && modules_ != nullptr) {
      for (NodeId n : call_modules_) {
        const ModuleInfo* m = modules_->find(g_.target(n));
        if (m != nullptr && c->accepts_module_class(m->class_name)) it->second.push_back(n);
      }
    }
    return it->second;
  }
  if (c == nullptr || c->alternatives.empty()) return by_target(op, pattern.target(p));
  std::string k = "alt " + std::to_string(static_cast<int>(op)) + " " + pattern.target(p);
  for (const std::string& t : c->alternatives) k += "|" + t;
  std::lock_guard lock(derived_mutex_.mutex);
  auto [it, fresh] = derived_.try_emplace(std::move(k));
  if (fresh) {
    std::vector<NodeId>& out = it->second;
    out = by_target(op, pattern.target(p));
    for (const std::string& t : c->alternatives) {
      const auto& more = by_target(op, t);
      out.insert(out.end(), more.begin(), more.end());
    }
    std::erase_if(out, [&](NodeId n) { return !g_.is_alive(n); });
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    std::sort(out.begin(), out.end(), [&](NodeId a, NodeId b) { return g_.comes_before(a, b); });
  }
  return it->second;
}

}  // namespace graft
