// `graft`: inspect, check, draw and re-save graph files; run Lua pipelines on them.
#include <fmt/core.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <new>

#include <sys/mman.h>

#include "graft/io/atomic_file.hpp"
#include "graft/io/dot.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/io/graph_text.hpp"
#include "graft/io/module_tree.hpp"
#include "graft/io/stats.hpp"
#include "graft/io/tabular.hpp"
#include "graft/ir/lint.hpp"
#include "graphviz.hpp"
#include "match_command.hpp"
#include "output_paths.hpp"
#include "partition_command.hpp"
#include "pass_command.hpp"
#include "plan_command.hpp"
#include "print_error.hpp"
#include "rewrite_command.hpp"
#include "rules_command.hpp"
#include "run_command.hpp"
#include "verify_command.hpp"
#include "whole_number.hpp"

namespace {

using namespace graft;

using cli::kExitError;
using cli::print_error;
constexpr int kExitUsage = 2;

int report(const Status& s) { return print_error(s.message()); }

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool g_no_lint = false;

/// Loads `path` and, unless --no-lint, refuses a graph that graft lint rejects: stats, pictures
/// and copies of a broken graph would pass it on without a word.
Result<GraphModule> load_linted(const std::string& path) {
  Result<GraphModule> gm = load_graph_file(path);
  if (!gm || g_no_lint) return gm;
  if (Status s = lint(*gm); !s) {
    s.diagnostic().file = path;
    s.diagnostic().message += " (graft lint rejects the graph; --no-lint reads it anyway)";
    return s;
  }
  return gm;
}

int cmd_print(const std::string& path, bool values, bool text) {
  Result<GraphModule> gm = load_linted(path);
  if (!gm) return report(gm.status());
  fmt::print("{}", text ? to_graph_text(gm->graph) : tabular(gm->graph, values));
  // Submodules with their own graph (a hierarchy, fused partitions): each after the root's.
  for (const ModuleInfo& m : gm->modules.entries()) {
    if (!m.graph) continue;
    fmt::print("\nmodule '{}' ({}):\n{}", m.path, m.class_name,
               text ? to_graph_text(*m.graph) : tabular(*m.graph, values));
  }
  return 0;
}

int cmd_stats(const std::string& path, bool json) {
  Result<GraphModule> gm = load_linted(path);
  if (!gm) return report(gm.status());
  GraphStats stats = compute_stats(gm.value());
  if (json) fmt::print("{}", stats.to_json());
  else fmt::print("{}\n{}", path, stats.to_text());
  return 0;
}

int cmd_tree(const std::string& path, const ModuleTreeOptions& options) {
  Result<GraphModule> gm = load_linted(path);
  if (!gm) return report(gm.status());
  Result<std::string> tree = module_tree(gm.value(), options);
  if (!tree) {
    Status s = tree.status();
    s.diagnostic().file = path;
    return report(s);
  }
  fmt::print("{}", tree.value());
  return 0;
}

int cmd_lint(const std::string& path, bool quiet) {
  Result<GraphModule> gm = load_graph_file(path);
  if (!gm) return report(gm.status());
  if (Status s = lint(*gm); !s) {
    s.diagnostic().file = path;
    return report(s);
  }
  if (!quiet) fmt::print("{}: ok ({} nodes, {} modules)\n", path, gm->graph.size(), gm->modules.size());
  return 0;
}

int cmd_dot(const std::string& path, const std::string& out) {
  Result<GraphModule> gm = load_linted(path);
  if (!gm) return report(gm.status());
  std::string dot = to_dot(gm->graph);
  Status s = ends_with(out, ".svg") ? cli::render_svg(dot, out) : write_output_file(out, dot);
  return s ? 0 : report(s);
}

int cmd_save(const std::string& path, const std::string& out) {
  Result<GraphModule> gm = load_linted(path);
  if (!gm) return report(gm.status());
  Status s = save_graph_file(gm.value(), out);
  return s ? 0 : report(s);
}

}  // namespace

static int run_command_line(int argc, char** argv) {
  CLI::App app{
      "graft: a graph rewrite engine for ML computation graphs.\n"
      "Graph files are JSON (docs/FORMAT.md); export them from PyTorch with `python3 -m graft_fx export`."};
  app.require_subcommand(1);
  app.footer(
      "Outputs (-o, --report): a regular file is replaced atomically (a temporary file beside it, then a\n"
      "rename; its mode is kept), so a failed run leaves the old file whole; a symbolic link is followed and\n"
      "its target replaced the same way; a device or FIFO is written into directly; '-' is stdout.");
  app.set_version_flag("--version", "graft 0.1.0");

  std::string graph, out;
  bool json = false, quiet = false;

  CLI::App* print = app.add_subcommand(
      "print", "Print the graph as a table, like torch.fx's print_tabular; then each submodule's own graph");
  print->add_option("GRAPH", graph, "graph file")->required();
  bool print_values = false;
  print->add_flag("--values", print_values,
                  "add a column with each node's recorded shape and dtype (float32[1, 64, 56, 56])");
  bool print_text = false;
  print->add_flag("--text", print_text, "one line per node: name = op target(args, key=value) (docs/FORMAT.md)")
      ->excludes("--values");
  print->add_flag("--no-lint", g_no_lint, "read the graph even if graft lint rejects it");

  CLI::App* stats =
      app.add_subcommand("stats", "Summarise a graph: node counts by kind and target, modules, parameters");
  stats->add_option("GRAPH", graph, "graph file")->required();
  stats->add_flag("--json", json, "print the counts as JSON");
  stats->add_flag("--no-lint", g_no_lint, "read the graph even if graft lint rejects it");

  CLI::App* tree = app.add_subcommand(
      "tree",
      "Print the module hierarchy as a tree: each node with its shape, and under each call of a submodule "
      "that has its own graph (python3 -m graft_fx export --hierarchy), that graph's nodes");
  tree->add_option("GRAPH", graph, "graph file")->required();
  ModuleTreeOptions tree_opts;
  tree->add_option("--depth", tree_opts.max_depth, "submodule levels to open (0: the root graph only; default: all)")
      ->check(cli::whole_number());
  bool tree_no_shapes = false;
  tree->add_flag("--no-shapes", tree_no_shapes, "names only, without the recorded shapes");
  tree->add_option("--at", tree_opts.at,
                   "start at this node path: a node of the root graph, or through calls into submodule graphs "
                   "(linear_0.output, encoder.layers.encoder_layer_0.mlp)");
  tree->add_flag("--no-lint", g_no_lint, "read the graph even if graft lint rejects it");

  CLI::App* lint = app.add_subcommand("lint", "Check every invariant of the graph; exit 1 naming the first broken one");
  lint->add_option("GRAPH", graph, "graph file")->required();
  lint->add_flag("-q,--quiet", quiet, "print nothing when the graph is fine");

  CLI::App* dot =
      app.add_subcommand("dot", "Draw the graph: Graphviz DOT, or SVG when OUT ends in .svg (needs Graphviz)");
  dot->add_option("GRAPH", graph, "graph file")->required();
  dot->add_option("-o,--output", out, "output file (.dot or .svg; '-': DOT on stdout)")->required();
  dot->add_flag("--no-lint", g_no_lint, "read the graph even if graft lint rejects it");
  std::string dot_support;
  dot->add_option("--partition", dot_support,
                  "colour the partitions of this support script (as graft partition finds them), with a legend");

  CLI::App* save = app.add_subcommand("save", "Load a graph file and write it back in canonical form");
  save->add_option("GRAPH", graph, "graph file")->required();
  save->add_option("-o,--output", out, "output graph file ('-': stdout)")->required();
  save->add_flag("--no-lint", g_no_lint, "read the graph even if graft lint rejects it");

  cli::RunOptions run_opts;
  CLI::App* run =
      app.add_subcommand("run", "Run a Lua pipeline on a graph and write the result (only if every pass succeeds)");
  run->add_option("PIPELINE", run_opts.pipeline, "Lua script returning graft.pipeline{...} or a pass")->required();
  run->add_option("GRAPH", run_opts.graph, "input graph file")->required();
  run->add_option("-o,--output", run_opts.output, "output graph file ('-': stdout)")->required();
  run->add_option("--report", run_opts.report, "also write the report as JSON to this file");
  run->add_flag("--json", run_opts.json, "print the report as JSON");
  run->add_flag("-q,--quiet", run_opts.quiet, "print nothing on success");
  cli::add_limit_options(*run, run_opts);

  CLI::App* watch = app.add_subcommand("watch", "Rerun a pipeline every time it (or a module it requires) is saved");
  watch->add_option("PIPELINE", run_opts.pipeline, "Lua pipeline script")->required();
  watch->add_option("GRAPH", run_opts.graph, "input graph file")->required();
  watch->add_option("-o,--output", run_opts.output, "output graph file, rewritten after each good run")->required();
  watch->add_option("--report", run_opts.report, "also write each run's report as JSON to this file");
  watch->add_option("--poll", run_opts.poll_seconds, "polling interval in seconds when inotify is unavailable")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 86400.0));
  watch->add_option("--max-runs", run_opts.max_runs, "stop after this many runs (0: run until interrupted)")
      ->capture_default_str()
      ->check(cli::whole_number(0, std::numeric_limits<int>::max()));
  cli::add_limit_options(*watch, run_opts);

  // match / explain: `RULES.lua GRAPH` (a rule script) or `--pattern P.json GRAPH` (a pattern graph file).
  cli::MatchCommandOptions match_opts;
  cli::RulesCommandOptions rules_opts;
  std::vector<std::string> match_inputs;
  CLI::App* match =
      app.add_subcommand("match", "List the matches of a rule script's rules (or of a pattern graph file) in a graph");
  match->add_option("INPUTS", match_inputs, "RULES.lua GRAPH, or GRAPH with --pattern")->required()->expected(1, 2);
  match->add_option("--pattern", match_opts.pattern,
                    "graph file of a pattern (export a function with graft_fx) instead of a rule script");
  match->add_option("--rule", rules_opts.rule, "only this rule (default: every enabled rule)");
  match->add_flag("--log", rules_opts.log, "also show the matcher's decision for every candidate: matches, or why not");
  match->add_flag("--json", match_opts.json, "print the matches as JSON");
  match->add_flag("--match-output", match_opts.match.match_output,
                  "pattern file: the pattern's output must be the graph's output");
  match->add_flag("--match-placeholder", match_opts.match.match_placeholder,
                  "pattern file: pattern inputs match only graph inputs");
  match->add_flag("--ignore-literals", match_opts.match.ignore_literals,
                  "pattern file: literals in the pattern match anything");
  match->add_flag("--modules-by-class", match_opts.modules_by_class,
                  "pattern file: its module calls match modules of the same class, wherever they are");
  bool keep_overlapping = false;
  match->add_flag("--keep-overlapping", keep_overlapping,
                  "pattern file: keep matches that share nodes (default: the earliest anchor wins)");
  cli::add_limit_options(*match, rules_opts.script);

  cli::MatchCommandOptions explain_opts;
  std::vector<std::string> explain_inputs;
  std::string explain_node;
  CLI::App* explain = app.add_subcommand(
      "explain",
      "For each candidate anchor of a rule (or pattern file), show whether it matches there or the first reason it does not");
  explain->add_option("INPUTS", explain_inputs, "RULES.lua GRAPH, or GRAPH with --pattern")->required()->expected(1, 2);
  explain->add_option("--pattern", explain_opts.pattern, "graph file of a pattern instead of a rule script");
  explain->add_option("--rule", rules_opts.rule, "the rule to explain (needed when the script has several)");
  explain->add_option("--node", explain_node,
                      "explain only this node (by name, or by node path in the root graph), whatever its target");
  explain->add_flag("--json", explain_opts.json, "print the explanations as JSON");
  explain->add_flag("--match-placeholder", explain_opts.match.match_placeholder,
                    "pattern file: pattern inputs match only graph inputs");
  explain->add_flag("--ignore-literals", explain_opts.match.ignore_literals,
                    "pattern file: literals in the pattern match anything");
  explain->add_flag("--modules-by-class", explain_opts.modules_by_class,
                    "pattern file: its module calls match modules of the same class");
  cli::add_limit_options(*explain, rules_opts.script);

  CLI::App* pattern = app.add_subcommand(
      "pattern", "Print the traced pattern graph of a rule script's rules, with their declared constraints");
  pattern->add_option("RULES", rules_opts.script.pipeline, "Lua script returning graft.rules{...} or graft.rule{...}")
      ->required();
  pattern->add_option("--rule", rules_opts.rule, "only this rule (default: all, disabled ones too)");
  cli::add_limit_options(*pattern, rules_opts.script);

  cli::RewriteCommandOptions rewrite_opts;
  CLI::App* rewrite = app.add_subcommand(
      "rewrite", "Replace every match of a pattern graph by a replacement graph (torch.fx replace_pattern semantics)");
  rewrite->add_option("--pattern", rewrite_opts.pattern, "graph file of the pattern")->required();
  rewrite
      ->add_option("--replacement", rewrite_opts.replacement,
                   "graph file of the replacement (same inputs, same number of outputs)")
      ->required();
  rewrite->add_option("GRAPH", rewrite_opts.graph, "graph file to rewrite")->required();
  rewrite->add_option("-o,--output", rewrite_opts.output, "output graph file, written only on success ('-': stdout)")
      ->required();
  rewrite->add_flag(
      "--keep-meta", rewrite_opts.keep_meta,
      "give each replacement output the metadata of the node it replaces (FX drops it); same as --meta outputs");
  rewrite
      ->add_option(
          "--meta", rewrite_opts.meta,
          "metadata policy: drop (FX), outputs (outputs take the replaced node's), all (also stack traces onto every new node)")
      ->check(CLI::IsMember({"drop", "outputs", "all"}));
  rewrite->add_flag("--keep-names", rewrite_opts.keep_names,
                    "a new node in a replaced node's place takes its name, so names stay stable across the rewrite "
                    "(FX gives it a fresh name)");
  rewrite->add_flag("--keep-unused-modules", rewrite_opts.keep_unused_modules,
                    "keep modules no node calls or reads after the rewrite (torch.fx deletes them)");
  rewrite->add_flag(
      "--json", rewrite_opts.json,
      "print every replacement as JSON (anchor, nodes_map, inputs with literals, new_nodes) instead of the summary line");
  rewrite->add_flag(
      "--modules-by-class", rewrite_opts.modules_by_class,
      "the pattern's module calls match modules of the same class, wherever they are; the replacement reaches them by the pattern's module names");

  const cli::PassCommand pass_command(app);

  cli::PartitionCommandOptions partition_opts;
  CLI::App* partition = app.add_subcommand(
      "partition",
      "Cut a graph into the partitions a backend supports (torch.fx CapabilityBasedPartitioner semantics); "
      "say why each other node is left out; optionally fuse them into submodules");
  cli::add_partition_options(*partition, partition_opts);

  CLI::App* verify = app.add_subcommand(
      "verify",
      "Check in PyTorch that each rule of a rule script computes what it replaces, on the graph files it names "
      "(runs python3 -m graft verify; `graft verify --help` lists its options)");
  verify->prefix_command();  // everything after `verify` goes to Python, --help included
  verify->set_help_flag();

  cli::PlanCommandOptions plan_opts;
  CLI::App* plan = app.add_subcommand(
      "plan",
      "Plan the graph's tensors into one memory arena: live ranges (views and in-place results share storage), "
      "the lower bound, each planner's arena, the tensors live at the peak; optionally reorder nodes first");
  cli::add_plan_options(*plan, plan_opts);

  // An unknown command is named as such (CLI11 would say "A subcommand is required", and
  // `graft frobnicate --help` would print the main help and exit 0).
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      fmt::print(stderr, "graft: unknown command {} (commands: {}; graft --help describes them)\n",
                 quoted_text(argv[1]), names);
      return kExitUsage;
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }

  // Every file the command will write, checked before any work: a folder, a missing folder or
  // an unwritable place fails now, not after a long run; so do two outputs that are one file
  // (the later would replace the earlier) and an output over an input (cli/output_paths.hpp).
  std::vector<cli::PathUse> outputs, inputs;
  if (*dot) outputs.push_back({"-o", out});
  if (*save) outputs.push_back({"-o", out, true});
  if (*dot || *save) inputs.push_back({"GRAPH", graph, save->parsed()});
  if (*dot && !dot_support.empty()) inputs.push_back({"--partition", dot_support});
  if (*run || *watch) {
    outputs.push_back({"-o", run_opts.output, true});
    if (!run_opts.report.empty()) outputs.push_back({"--report", run_opts.report});
    inputs.push_back({"PIPELINE", run_opts.pipeline});
    // watch runs the pipeline again on GRAPH after each save: its own output would pile up
    inputs.push_back({"GRAPH", run_opts.graph, run->parsed()});
  }
  if (*rewrite) {
    outputs.push_back({"-o", rewrite_opts.output, true});
    inputs.insert(inputs.end(),
                  {{"--pattern", rewrite_opts.pattern},
                   {"--replacement", rewrite_opts.replacement},
                   {"GRAPH", rewrite_opts.graph, true}});
  }
  if (*partition) {
    if (!partition_opts.output.empty()) outputs.push_back({"-o", partition_opts.output, true});
    if (!partition_opts.dot.empty()) outputs.push_back({"--dot", partition_opts.dot});
    inputs.insert(inputs.end(),
                  {{"SUPPORT", partition_opts.script.pipeline}, {"GRAPH", partition_opts.script.graph, true}});
  }
  if (*plan) {
    if (!plan_opts.output.empty()) outputs.push_back({"-o", plan_opts.output});
    if (!plan_opts.svg.empty()) outputs.push_back({"--svg", plan_opts.svg});
    if (!plan_opts.graph_output.empty()) outputs.push_back({"--schedule-output", plan_opts.graph_output, true});
    inputs.push_back({"GRAPH", plan_opts.graph, true});
  }
  if (pass_command.chosen()) pass_command.paths(outputs, inputs);
  const bool json_to_stdout = (pass_command.chosen() && pass_command.json_to_stdout()) || (*run && run_opts.json) ||
      (*rewrite && rewrite_opts.json) || (*plan && plan_opts.json);
  if (std::count_if(outputs.begin(), outputs.end(), [](const cli::PathUse& o) { return o.path == "-"; }) +
          (json_to_stdout ? 1 : 0) >
      1) {
    print_error("only one output can go to stdout ('-')");
    return kExitUsage;
  }
  if (Status s = cli::check_output_paths(outputs, inputs); !s) {
    report(s);
    return s.diagnostic().file.empty() ? kExitUsage : kExitError;  // a clash of options, or a bad place
  }

  if (*print) return cmd_print(graph, print_values, print_text);
  if (*stats) return cmd_stats(graph, json);
  if (*lint) return cmd_lint(graph, quiet);
  if (*tree) {
    tree_opts.shapes = !tree_no_shapes;
    return cmd_tree(graph, tree_opts);
  }
  if (*dot && !dot_support.empty()) {
    partition_opts.script.pipeline = dot_support;
    partition_opts.script.graph = graph;
    partition_opts.dot = out;
    partition_opts.quiet = true;
    return cli::cmd_partition(partition_opts);
  }
  if (*dot) return cmd_dot(graph, out);
  if (*save) return cmd_save(graph, out);
  if (*run) return cli::cmd_run(run_opts);
  if (*rewrite) return cli::cmd_rewrite(rewrite_opts);
  if (pass_command.chosen()) return pass_command.run();
  if (*partition) return cli::cmd_partition(partition_opts);
  if (*plan) return cli::cmd_plan(plan_opts);
  if (*pattern) return cli::cmd_pattern(rules_opts);
  if (*match || *explain) {
    const bool is_match = match->parsed();
    cli::MatchCommandOptions& file_opts = is_match ? match_opts : explain_opts;
    const std::vector<std::string>& inputs = is_match ? match_inputs : explain_inputs;
    const char* name = is_match ? "match" : "explain";
    if (!file_opts.pattern.empty()) {
      if (inputs.size() != 1) {
        fmt::print(stderr, "graft {}: with --pattern, give only the GRAPH\n", name);
        return kExitUsage;
      }
      if (!rules_opts.rule.empty()) {
        fmt::print(stderr, "graft {}: --rule needs a rule script, not --pattern\n", name);
        return kExitUsage;
      }
      file_opts.graph = inputs[0];
      file_opts.log = rules_opts.log;
      if (!is_match) return cli::cmd_explain(file_opts, explain_node);
      file_opts.match.remove_overlapping_matches = !keep_overlapping;
      return cli::cmd_match(file_opts);
    }
    if (inputs.size() != 2) {
      fmt::print(stderr, "graft {}: give RULES.lua GRAPH (or --pattern P.json GRAPH)\n", name);
      return kExitUsage;
    }
    rules_opts.script.pipeline = inputs[0];
    rules_opts.script.graph = inputs[1];
    rules_opts.json = file_opts.json;
    rules_opts.node = explain_node;
    return is_match ? cli::cmd_match_rules(rules_opts) : cli::cmd_explain_rules(rules_opts);
  }
  if (*watch) return cli::cmd_watch(run_opts);
  if (*verify) return cli::cmd_verify(verify->remaining());
  return kExitUsage;
}

namespace {

constexpr char kOutOfMemory[] = "graft: error: out of memory\n";

/// Address space held back for the way out. When an allocation fails, the new-handler gives it
/// back and throws std::bad_alloc: the destructors that run while the error unwinds to main
/// (some allocate: nlohmann::json's destroys nested values through a stack) then find memory
/// under an address-space limit (`ulimit -v`), where their failure would end the process in
/// std::terminate (exit 134). Mapped without access, so it costs no memory.
void* g_reserve = nullptr;
constexpr std::size_t kReserveBytes = std::size_t{64} << 20;

void release_reserve() {
  if (g_reserve != nullptr) munmap(g_reserve, kReserveBytes);
  g_reserve = nullptr;
  throw std::bad_alloc();
}

/// The last resort, for a std::bad_alloc thrown where no handler can catch it (a destructor, a
/// worker thread): the same message and exit status as main's.
[[noreturn]] void on_terminate() {
  if (const std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc&) {
      std::fputs(kOutOfMemory, stderr);
      std::_Exit(kExitError);
    } catch (const std::exception& other) {
      std::fprintf(stderr, "graft: internal error: uncaught exception: %s\n", other.what());
    } catch (...) { std::fputs("graft: internal error: uncaught exception\n", stderr); }
  }
  std::abort();
}

}  // namespace

int main(int argc, char** argv) {
  // Whatever is thrown past the commands (out of memory, a file system error) ends as an error
  // message and exit 1, never as an abort.
  std::set_terminate(on_terminate);
  g_reserve = mmap(nullptr, kReserveBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (g_reserve == MAP_FAILED) g_reserve = nullptr;
  std::set_new_handler(release_reserve);
  try {
    return run_command_line(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fputs(kOutOfMemory, stderr);
    return kExitError;
  } catch (const std::exception& e) {
    print_error(e.what());
    return kExitError;
  }
}
