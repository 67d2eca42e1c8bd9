// OperatorSupport: which nodes a backend can run, as data (target lists, node names) and as
// code (predicates), combined with torch.fx's combinators: `chain` (every rule must accept),
// `any_chain` (one rule must), and `negate`.
//
// A node's support name is what torch.fx's `get_node_target` gives: a call_function's
// qualified target (`torch.ops.aten.add.Tensor`, `_operator.getitem`), a call_method's method
// name, a call_module's class (`torch.nn.modules.linear.Linear`); a call_module also answers to
// its path. The partitioner asks only about calls: placeholders, get_attr nodes and the output
// stay outside every partition (a fused submodule reads parameters through its inputs).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "graft/ir/graph_module.hpp"

namespace graft {

/// The answer for one node: supported or not, and the rule that decided.
struct SupportVerdict {
  bool supported = false;
  std::string rule;  ///< the deciding rule's name (for a decline: the rule that declined)
};

class OperatorSupport {
 public:
  /// Asked with the graph and its module table (null when the graph has none).
  using Predicate = std::function<bool(const Graph&, const ModuleTable*, NodeId)>;

  /// Accepts nodes whose support name (or, for call_module, path) is in `targets`. A function
  /// may be named by any path torch reaches it through (`torch.nn.functional.linear` also
  /// accepts the `torch._C._nn.linear` torch.fx records).
  static OperatorSupport targets(std::string name, std::vector<std::string> targets);
  /// Declines nodes whose name is in `names`; accepts every other.
  static OperatorSupport decline_names(std::string name, std::vector<std::string> names);
  /// Asks `predicate`. `depends_on_target` promises that its answer is the same for every node
  /// with the same op and target, which lets the partitioner ask once per target.
  static OperatorSupport predicate(std::string name, Predicate predicate, bool depends_on_target = false);
  static OperatorSupport chain(std::string name, std::vector<OperatorSupport> rules);
  static OperatorSupport any_chain(std::string name, std::vector<OperatorSupport> rules);
  static OperatorSupport negate(std::string name, OperatorSupport rule);

  SupportVerdict decide(const Graph& g, const ModuleTable* modules, NodeId n) const;
  SupportVerdict decide(const GraphModule& gm, NodeId n) const { return decide(gm.graph, &gm.modules, n); }
  bool is_supported(const GraphModule& gm, NodeId n) const { return decide(gm, n).supported; }
  const std::string& name() const;
  /// True if every rule's answer depends only on the node's op and target.
  bool depends_only_on_target() const;

  struct Rule;

 private:
  explicit OperatorSupport(std::shared_ptr<const Rule> rule) : rule_(std::move(rule)) {}
  std::shared_ptr<const Rule> rule_;
};

/// torch.fx's `get_node_target`: what a support rule matches a node by (see above).
std::string_view support_name(const Graph& g, const ModuleTable* modules, NodeId n);

}  // namespace graft
