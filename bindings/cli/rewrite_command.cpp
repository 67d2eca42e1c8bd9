// `graft rewrite --pattern P.json --replacement R.json G.json -o OUT.json`.
#include "rewrite_command.hpp"

#include <cstdio>

#include <fmt/core.h>

#include "command.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/ir/lint.hpp"
#include "graft/ir/python_repr.hpp"
#include "graft/rewrite/replacement_attributes.hpp"
#include "pattern_file.hpp"
#include "print_error.hpp"

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

/// torch.fx's ReplacedPatterns, one object per replacement: where it was found, what every
/// pattern node matched (inputs by what they bound, literals as Python spells them, a node
/// an earlier replacement replaced by its replacing node), and the nodes it made.
Json replacements_json(const RewriteCommandOptions& o, const Graph& pattern, const Graph& g,
                       const std::vector<ReplacedPattern>& done) {
  Json list = Json::array();
  for (const ReplacedPattern& r : done) {
    Json e;
    e["anchor"] = r.anchor_name;
    Json nodes = Json::object();  // built apart: a reference into an ordered_json moves when a key is added
    Json inputs = Json::object();
    std::size_t named = 0;  // matched_names follows pattern order, literals left out
    for (NodeId pn : pattern.nodes()) {
      if (pattern.op(pn) == OpKind::Output) continue;
      const MatchValue* v = pn < r.nodes_map.size() ? &r.nodes_map[pn] : nullptr;
      Json value = nullptr;  // an input the pattern never uses binds nothing
      if (v != nullptr && v->literal) {
        value = format_argument(g, *v->literal);
      } else if (named < r.matched_names.size() && r.matched_names[named].first == pattern.name(pn)) {
        value = r.matched_names[named++].second;
      }
      if (!value.is_null()) nodes[pattern.name(pn)] = value;
      if (pattern.op(pn) == OpKind::Placeholder) inputs[pattern.name(pn)] = std::move(value);
    }
    e["nodes_map"] = std::move(nodes);
    e["inputs"] = std::move(inputs);
    e["new_nodes"] = r.replacement_names;
    list.push_back(std::move(e));
  }
  Json j;
  j["pattern"] = o.pattern;
  j["replacement"] = o.replacement;
  j["graph"] = o.graph;
  j["output"] = o.output;
  j["count"] = done.size();
  j["nodes"] = g.size();
  j["replacements"] = std::move(list);
  return j;
}

}  // namespace

int cmd_rewrite(const RewriteCommandOptions& o) {
  auto fail = [](const Status& s) {
    print_error(s.message());
    return 1;
  };
  Result<GraphModule> replacement = load_graph_file(o.replacement);
  if (!replacement) return fail(replacement.status());
  Result<GraphModule> gm = load_graph_file(o.graph);
  if (!gm) return fail(gm.status());
  ReplaceOptions options;
  options.match = o.match;
  options.meta = o.keep_meta ? MetaPolicy::Outputs : MetaPolicy::Drop;
  options.keep_names = o.keep_names;
  if (!o.meta.empty()) {
    Result<MetaPolicy> m = parse_meta_policy(o.meta);
    if (!m) return fail(m.status());
    options.meta = m.value();
  }
  Result<SubgraphMatcher> matcher = matcher_from_file(o.pattern, o.match, o.modules_by_class);
  if (!matcher) return fail(matcher.status());
  Result<std::vector<ReplacedPattern>> done = replace_pattern(*gm, matcher.value(), replacement->graph, options);
  if (!done) return fail(done.status());
  // As torch.fx: modules nothing uses any more go, and what the replacement's nodes call or
  // read comes from the replacement's own module table.
  if (!o.keep_unused_modules) delete_unused_submodules(gm.value());
  if (Status s = adopt_replacement_attributes(gm.value(), replacement->modules); !s) return fail(s);
  if (Status s = lint(*gm); !s) return fail(s);  // never write an invalid graph
  if (Status s = save_graph_file(gm.value(), o.output); !s) return fail(s);
  if (o.json) {
    fmt::print("{}\n", replacements_json(o, matcher->pattern(), gm->graph, done.value()).dump(2));
  } else {
    fmt::print(o.output == "-" ? stderr : stdout, "{} replacement{} of {} by {}: {} nodes, wrote {}\n", done->size(),
               done->size() == 1 ? "" : "s", o.pattern, o.replacement, gm->graph.size(), o.output);
  }
  if (done->empty() && !o.modules_by_class) print_module_path_hint(matcher->pattern(), gm->modules);
  return 0;
}

namespace {

class RewriteCommand final : public Command {
 public:
  explicit RewriteCommand(CLI::App& parent)
      : Command(parent.add_subcommand("rewrite",
                                      "Replace every match of a pattern graph by a replacement graph "
                                      "(torch.fx replace_pattern semantics)")) {
    app().add_option("--pattern", o_.pattern, "graph file of the pattern")->required();
    app()
        .add_option("--replacement", o_.replacement,
                    "graph file of the replacement (same inputs, same number of outputs)")
        ->required();
    app().add_option("GRAPH", o_.graph, "graph file to rewrite")->required();
    app().add_option("-o,--output", o_.output, "output graph file, written only on success ('-': stdout)")->required();
    app().add_flag(
        "--keep-meta", o_.keep_meta,
        "give each replacement output the metadata of the node it replaces (FX drops it); same as --meta outputs");
    app()
        .add_option("--meta", o_.meta,
                    "metadata policy: drop (FX), outputs (outputs take the replaced node's), all (also stack traces "
                    "onto every new node)")
        ->check(CLI::IsMember({"drop", "outputs", "all"}));
    app().add_flag("--keep-names", o_.keep_names,
                   "a new node in a replaced node's place takes its name, so names stay stable across the rewrite "
                   "(FX gives it a fresh name)");
    app().add_flag("--keep-unused-modules", o_.keep_unused_modules,
                   "keep modules no node calls or reads after the rewrite (torch.fx deletes them)");
    app().add_flag("--json", o_.json,
                   "print every replacement as JSON (anchor, nodes_map, inputs with literals, new_nodes) instead of "
                   "the summary line");
    app().add_flag("--modules-by-class", o_.modules_by_class,
                   "the pattern's module calls match modules of the same class, wherever they are; the replacement "
                   "reaches them by the pattern's module names");
  }

  void paths(std::vector<PathUse>& outputs, std::vector<PathUse>& inputs) const override {
    outputs.push_back({"-o", o_.output, true});
    inputs.insert(inputs.end(),
                  {{"--pattern", o_.pattern}, {"--replacement", o_.replacement}, {"GRAPH", o_.graph, true}});
  }
  [[nodiscard]] bool json_to_stdout() const override { return o_.json; }
  int run() override { return cmd_rewrite(o_); }

 private:
  RewriteCommandOptions o_;
};

}  // namespace

std::unique_ptr<Command> rewrite_command(CLI::App& app) { return std::make_unique<RewriteCommand>(app); }

}  // namespace graft::cli
