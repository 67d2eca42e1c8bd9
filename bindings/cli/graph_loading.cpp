#include "graph_loading.hpp"

#include "graft/io/graph_json.hpp"
#include "graft/ir/lint.hpp"
#include "print_error.hpp"

namespace graft::cli {

Result<GraphModule> load_linted(const std::string& path, bool no_lint) {
  Result<GraphModule> gm = load_graph_file(path);
  if (!gm || no_lint) return gm;
  if (Status s = lint(*gm); !s) {
    s.diagnostic().file = path;
    s.diagnostic().message += " (graft lint rejects the graph; --no-lint reads it anyway)";
    return s;
  }
  return gm;
}

void add_no_lint_flag(CLI::App& cmd, bool& no_lint) {
  cmd.add_flag("--no-lint", no_lint, "read the graph even if graft lint rejects it");
}

int report(const Status& s) { return print_error(s.message()); }

}  // namespace graft::cli
