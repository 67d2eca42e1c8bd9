// `graft rewrite --pattern P.json --replacement R.json G.json -o OUT.json`.
#include "rewrite_command.hpp"

#include <cstdio>

#include <fmt/core.h>

#include "graft/io/graph_json.hpp"
#include "match_command.hpp"

namespace graft::cli {

namespace {

/// Nothing matched and the pattern calls a module the graph does not have at that path: the
/// pattern was most likely exported from its own module, whose paths mean nothing here.
void print_module_path_hint(const Graph& pattern, const ModuleTable& modules) {
  for (NodeId n : pattern.nodes()) {
    if (pattern.op(n) != OpKind::CallModule || modules.find(pattern.target(n)) != nullptr) continue;
    fmt::print(stderr,
               "hint: the pattern calls the module '{}', and the graph has no module at that path; "
               "--modules-by-class matches the pattern's modules by class wherever they are\n",
               pattern.target(n));
    return;
  }
}

}  // namespace

int cmd_rewrite(const RewriteCommandOptions& o) {
  auto fail = [](const Status& s) {
    fmt::print(stderr, "graft: error: {}\n", s.message());
    return 1;
  };
  Result<GraphModule> replacement = load_graph_file(o.replacement);
  if (!replacement) return fail(replacement.status());
  Result<GraphModule> gm = load_graph_file(o.graph);
  if (!gm) return fail(gm.status());
  ReplaceOptions options;
  options.match = o.match;
  options.meta = o.keep_meta ? MetaPolicy::Outputs : MetaPolicy::Drop;
  if (!o.meta.empty()) {
    Result<MetaPolicy> m = parse_meta_policy(o.meta);
    if (!m) return fail(m.status());
    options.meta = m.value();
  }
  Result<SubgraphMatcher> matcher = matcher_from_file(o.pattern, o.match, o.modules_by_class);
  if (!matcher) return fail(matcher.status());
  Result<std::vector<ReplacedPattern>> done =
      replace_pattern(gm->graph, matcher.value(), replacement->graph, options, &gm->modules);
  if (!done) return fail(done.status());
  if (Status s = gm->lint(); !s) return fail(s);  // never write an invalid graph
  if (Status s = save_graph_file(gm.value(), o.output); !s) return fail(s);
  fmt::print("{} replacement{} of {} by {}: {} nodes, wrote {}\n", done->size(), done->size() == 1 ? "" : "s", o.pattern,
             o.replacement, gm->graph.size(), o.output);
  if (done->empty() && !o.modules_by_class) print_module_path_hint(matcher->pattern(), gm->modules);
  return 0;
}

}  // namespace graft::cli
