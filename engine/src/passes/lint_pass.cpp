// `lint` as a pipeline step and a command: the IR's invariant check (graft/ir/lint.hpp).
#include "graft/ir/lint.hpp"
#include "graft/passes/pass_registry.hpp"

namespace graft {

extern const PassInfo kLintPass{
    .name = "lint",
    .method = {},
    .summary =
        "Checks every invariant of the graph, its module table and every submodule graph; fails naming the node.",
    .report = "nothing",
    .options = {},
    .edits = false,
    .run = [](PassContext& c, const PassOptions&) -> Result<ReportValue> {
      if (Status st = lint(c.graph(), &c.modules()); !st) return st;
      if (Status st = lint_submodule_graphs(c.modules()); !st) return st;
      return ReportValue{};
    },
};

}  // namespace graft
