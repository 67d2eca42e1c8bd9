// Dead code elimination, FX style: last to first, drop pure nodes nobody uses.
#include "graft/passes/dead_code.hpp"

#include "graft/ir/target_name.hpp"

namespace graft {

namespace {

bool mutates_by_name(std::string_view target, OpKind op) {
  if (op == OpKind::CallMethod) return !target.empty() && target.back() == '_' && target.substr(0, 2) != "__";
  OpOverloadName parts;  // torch.ops.aten.add_.Tensor, torch.ops.aten.add.out
  if (!parse_op_overload(target, parts)) return false;
  return (parts.op.back() == '_' && parts.op.substr(0, 2) != "__") || parts.overload == "out";
}

}  // namespace

bool is_side_effectful(const Graph& g, NodeId n, const OpSchemaRegistry& ops) {
  const NodeData& d = g.node(n);
  if (d.op == OpKind::Placeholder || d.op == OpKind::Output) return true;
  for (const auto& [key, value] : d.kwargs)  // relu(x, inplace=True) mutates x
    if (key == "inplace" && value.holds<bool>() && value.get<bool>()) return true;
  const std::string& t = g.target(n);
  if (d.op == OpKind::CallFunction) {
    if (ops.has_side_effects(t)) return true;
    if (const OpSchema* schema = ops.find(t)) return schema->is_mutable();
  }
  if (d.op != OpKind::CallFunction && d.op != OpKind::CallMethod) return false;
  return mutates_by_name(t, d.op);
}

std::size_t eliminate_dead_code(Graph& g, const OpSchemaRegistry& ops) {
  std::size_t removed = 0;
  for (NodeId n = g.last(); n != kNoNode;) {
    NodeId previous = g.prev(n);
    if (g.users(n).empty() && !is_side_effectful(g, n, ops)) {
      (void)g.erase_node(n);  // cannot fail: no users
      ++removed;
    }
    n = previous;
  }
  return removed;
}

}  // namespace graft
