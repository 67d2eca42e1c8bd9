// Dead code elimination, FX style: last to first, drop pure nodes nobody uses.
#include "graft/passes/dead_code.hpp"
#include "graft/passes/pass_registry.hpp"

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

extern const PassInfo kDeadCodeEliminationPass{
    .name = "dead_code_elimination",
    .method = "eliminate_dead_code",
    .summary =
        "Removes nodes without users, last to first, except side-effectful ones (torch.fx's "
        "eliminate_dead_code with torch 2.14's purity).",
    .report = "how many nodes were removed",
    .options = {},
    .run = [](PassContext& c, const PassOptions&) -> Result<ReportValue> {
      return ReportValue::integer(static_cast<std::int64_t>(eliminate_dead_code(c.graph(), c.schemas)));
    },
};

}  // namespace graft
