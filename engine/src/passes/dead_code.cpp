// Dead code elimination, FX style: last to first, drop pure nodes nobody uses.
#include "graft/passes/dead_code.hpp"

#include "graft/passes/purity.hpp"

namespace graft {

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
