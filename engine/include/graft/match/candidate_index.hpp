// CandidateIndex: the graph nodes a pattern node could match, without scanning the graph.
// Nodes are kept by (op, target) in graph order; lists for module classes and target
// alternatives are derived on demand. While it listens to its graph (ListenerScope), nodes
// created later are added, last in their lists; erased nodes are skipped by the callers
// (Graph::is_alive). A node whose op or target is edited while the index exists stays listed
// under the old one only (harmless: the matcher checks every candidate again) and is missing
// from the new one's list; the rewrite driver never retargets nodes, it replaces them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "graft/ir/detail/lazy_cache.hpp"
#include "graft/ir/graph.hpp"
#include "graft/ir/graph_module.hpp"
#include "graft/ir/module_table.hpp"

namespace graft {

struct NodeConstraint;

class CandidateIndex final : public GraphListener {
 public:
  explicit CandidateIndex(const Graph& g, const ModuleTable* modules = nullptr);
  explicit CandidateIndex(const GraphModule& gm) : CandidateIndex(gm.graph, &gm.modules) {}

  /// A node created after the index was built goes last in its list.
  void node_inserted(const Graph& g, NodeId n) override;

  /// Graph nodes that pattern node `p` of `pattern` may match, judged by op, target, module
  /// class and alternatives only. May contain erased nodes when the graph changed.
  const std::vector<NodeId>& find(const Graph& pattern, NodeId p, const NodeConstraint* c) const;

  const Graph& graph() const { return g_; }
  const ModuleTable* modules() const { return modules_; }

 private:
  static std::uint64_t key(OpKind op, Symbol s) { return (static_cast<std::uint64_t>(op) << 32) | s; }
  const std::vector<NodeId>& by_target(OpKind op, const std::string& target) const;

  const Graph& g_;
  const ModuleTable* modules_;
  std::unordered_map<std::uint64_t, std::vector<NodeId>> by_key_;
  std::vector<NodeId> all_;
  std::vector<NodeId> get_attrs_;
  std::vector<NodeId> call_modules_;
  /// By class or alternatives, filled on first use under derived_mutex_ (threads may share an
  /// index); cleared when a node is added.
  mutable std::map<std::string, std::vector<NodeId>> derived_;
  mutable detail::CacheMutex derived_mutex_;
};

}  // namespace graft
