// `graft pass NAME GRAPH -o OUT [--option KEY=VALUE]...`: one built-in pass of the registry
// (graft/passes/pass_registry.hpp) on a graph file; `graft pass --list [--markdown]` lists them.
#include <cstdio>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/ir/lint.hpp"
#include "graft/passes/pass_registry.hpp"
#include "print_error.hpp"

namespace graft::cli {

namespace {

using Json = nlohmann::ordered_json;

/// A report as JSON: nodes by name, positions from 0.
Json report_json(const ReportValue& v, const Graph& g) {
  using Kind = ReportValue::Kind;
  switch (v.kind) {
    case Kind::Nil: return nullptr;
    case Kind::Bool: return v.flag;
    case Kind::Int:
    case Kind::Position: return v.number;
    case Kind::Text: return v.text;
    case Kind::Node: return g.is_alive(v.node) ? Json(g.name(v.node)) : Json(nullptr);
    case Kind::List: {
      Json out = Json::array();
      for (const ReportValue& item : v.items) out.push_back(report_json(item, g));
      return out;
    }
    case Kind::Record: {
      Json out = Json::object();
      for (std::size_t i = 0; i < v.items.size(); ++i) out[v.keys[i]] = report_json(v.items[i], g);
      return out;
    }
  }
  return nullptr;
}

/// `KEY=VALUE` or `KEY` (a flag set to true) against the pass's declared options.
Result<PassOptions> parse_options(const PassInfo& pass, const std::vector<std::string>& given) {
  PassOptions options;
  for (const std::string& text : given) {
    const std::size_t eq = text.find('=');
    const std::string key = text.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : text.substr(eq + 1);
    const PassOption* declared = nullptr;
    for (const PassOption& o : pass.options)
      if (o.name == key) declared = &o;
    if (declared != nullptr && declared->choices.empty()) {
      if (value.empty() || value == "true") options.set(key, true);
      else if (value == "false") options.set(key, false);
      else return Status::error("--option " + text + ": " + key + " is true or false");
    } else {
      options.set(key, value);  // check_options refuses an unknown key or a word not in the set
    }
  }
  if (Status st = check_options(pass, options, "graft pass " + std::string(pass.name)); !st) return st;
  return options;
}

/// Text for a Markdown table cell: a `|` would end the cell.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string markdown_reference() {
  std::string out =
      "# Built-in passes\n\n"
      "Generated from the engine's pass registry (`graft pass --list --markdown`); a test fails when this\n"
      "page and the registry disagree. Each pass runs the same way from every host:\n\n"
      "- in a Lua pipeline, by name: `passes = {\"functionalize\", \"dead_code_elimination\"}` or\n"
      "  `graft.builtin(\"functionalize\")`;\n"
      "- on a graph in Lua, as its method: `g:functionalize()`, options as a table: `g:normalize_args{keywords = "
      "true}`;\n"
      "- on a graph file: `graft pass NAME G.json -o OUT.json [--option KEY=VALUE]`;\n"
      "- on a `torch.fx.GraphModule`: `graft.passes.run(gm, \"NAME\", KEY=VALUE)` or `graft.passes.NAME(gm, "
      "KEY=VALUE)`.\n\n"
      "A report is what the Lua method returns; Python and `graft pass --json` give the same with nodes\n"
      "by name and positions counted from 0.\n\n"
      "| pass | Lua method | what it does | report |\n|---|---|---|---|\n";
  for (const PassInfo* p : pass_registry())
    out += fmt::format("| `{}` | {} | {} | {} |\n", p->name,
                       p->method.empty() ? "" : fmt::format("`g:{}()`", p->method), cell(p->summary), cell(p->report));
  for (const PassInfo* p : pass_registry()) {
    if (p->options.empty()) continue;
    out += fmt::format("\n## Options of `{}`\n\n| option | takes | default | meaning |\n|---|---|---|---|\n", p->name);
    for (const PassOption& o : p->options) {
      std::string takes = "`true`, `false`";
      if (!o.choices.empty()) {
        takes.clear();
        for (std::string_view c : o.choices) takes += (takes.empty() ? "`" : ", `") + std::string(c) + "`";
      }
      out += fmt::format("| `{}` | {} | `{}` | {} |\n", o.name, takes, o.fallback, cell(o.doc));
    }
  }
  return out;
}

class PassCommand final : public Command {
 public:
  explicit PassCommand(CLI::App& parent)
      : Command(parent.add_subcommand("pass",
                                      "Run one built-in pass (dead code elimination, functionalisation, ...) on a "
                                      "graph file; --list names them")) {
    app().add_option("NAME", name_, "the pass (graft pass --list)");
    app().add_option("GRAPH", graph_, "graph file");
    app().add_option("-o,--output", output_, "output graph file, written only on success ('-': stdout)");
    app()
        .add_option("--option", options_, "KEY=VALUE (or KEY for a flag set to true); repeatable")
        ->allow_extra_args(false);
    app().add_flag("--json", json_, "print the report as JSON (nodes by name, positions from 0)");
    app().add_flag("--list", list_, "list the passes with what each does and reports");
    app().add_flag("--markdown", markdown_, "with --list: the pass reference page (docs/reference/passes.md)");
  }

  void paths(std::vector<PathUse>& outputs, std::vector<PathUse>& inputs) const override {
    if (!output_.empty()) outputs.push_back({"-o", output_, true});
    if (!graph_.empty()) inputs.push_back({"GRAPH", graph_, true});
  }

  [[nodiscard]] bool json_to_stdout() const override { return json_; }

  int run() override {
    if (list_) {
      if (markdown_) {
        fmt::print("{}", markdown_reference());
        return 0;
      }
      for (const PassInfo* p : pass_registry()) fmt::print("{:<34} {}\n", p->name, p->summary);
      return 0;
    }
    const PassInfo* pass = find_pass(name_);
    if (name_.empty() || graph_.empty()) {
      fmt::print(stderr, "graft pass: give NAME GRAPH (or --list)\n");
      return kExitUsage;
    }
    if (pass == nullptr) return print_error("unknown pass '" + name_ + "' (" + pass_names() + ")");
    if (pass->edits && output_.empty()) {
      print_error("graft pass " + name_ + " edits the graph: give -o OUT (written only on success)");
      return kExitUsage;
    }
    Result<PassOptions> options = parse_options(*pass, options_);
    if (!options) {
      print_error(options.status().message());
      return kExitUsage;
    }
    Result<GraphModule> gm = load_graph_file(graph_);
    if (!gm) return print_error(gm.status().message());
    PassContext context{.target = GraphModuleRef::whole(*gm), .schemas = OpSchemaRegistry::builtin()};
    Result<ReportValue> report = run_pass(*pass, context, options.value());
    if (!report) return print_error(graph_ + ": " + name_ + ": " + report.status().message());
    if (Status st = lint(*gm); !st)  // never write an invalid graph (a pipeline step refuses it too)
      return print_error(graph_ + ": " + name_ + " left an invalid graph: " + st.message());
    if (!output_.empty())
      if (Status st = save_graph_file(gm.value(), output_); !st) return print_error(st.message());
    const Json result = report_json(report.value(), gm->graph);
    if (json_) {
      Json j;
      j["pass"] = name_;
      j["graph"] = graph_;
      if (!output_.empty()) j["output"] = output_;
      j["nodes"] = gm->graph.size();
      j["report"] = result;
      fmt::print("{}\n", j.dump(2));
      return 0;
    }
    fmt::print(output_ == "-" ? stderr : stdout, "{}: {}{}\n", name_, result.is_null() ? "ok" : result.dump(),
               output_.empty() ? "" : fmt::format("; {} nodes, wrote {}", gm->graph.size(), output_));
    return 0;
  }

 private:
  std::string name_, graph_, output_;
  std::vector<std::string> options_;
  bool list_ = false, markdown_ = false, json_ = false;
};

}  // namespace

std::unique_ptr<Command> pass_command(CLI::App& app) { return std::make_unique<PassCommand>(app); }

}  // namespace graft::cli
