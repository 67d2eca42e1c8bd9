// Dead code elimination, FX style: last to first, drop pure nodes nobody uses.
#include <array>

#include "graft/ir/graph.hpp"
#include "graft/ir/target_name.hpp"

namespace graft {

bool Graph::is_side_effectful(const Graph& g, NodeId n) {
  static constexpr std::array<std::string_view, 6> kEffectful = {"torch._assert",
                                                                 "torch._assert_async",
                                                                 "torch.ops.aten._assert_async.default",
                                                                 "torch.ops.aten._assert_async.msg",
                                                                 "torch.ops.profiler._record_function_enter",
                                                                 "torch.ops.profiler._record_function_exit"};
  const NodeData& d = g.node(n);
  if (d.op == OpKind::Placeholder || d.op == OpKind::Output) return true;
  for (const auto& [key, value] : d.kwargs)  // relu(x, inplace=True) mutates x
    if (key == "inplace" && value.holds<bool>() && value.get<bool>()) return true;
  const std::string& t = g.target(n);
  if (d.op == OpKind::CallFunction) {
    for (std::string_view e : kEffectful)
      if (t == e) return true;
    // ATen in-place and out= overloads mutate: torch.ops.aten.add_.Tensor, aten.add.out.
    OpOverloadName parts;
    if (parse_op_overload(t, parts)) {
      if (parts.op.back() == '_' && parts.op.substr(0, 2) != "__") return true;
      if (parts.overload == "out") return true;
    }
  }
  if (d.op == OpKind::CallMethod && !t.empty() && t.back() == '_' && t.compare(0, 2, "__") != 0) return true;
  return false;
}

std::size_t Graph::eliminate_dead_code(const std::function<bool(const Graph&, NodeId)>& is_impure) {
  std::size_t removed = 0;
  for (NodeId n = tail_; n != kNoNode;) {
    NodeId previous = slots_[n].prev;
    bool impure = is_impure ? is_impure(*this, n) : is_side_effectful(*this, n);
    if (slots_[n].users.empty() && !impure) {
      (void)erase_node(n);  // cannot fail: no users
      ++removed;
    }
    n = previous;
  }
  return removed;
}

}  // namespace graft
