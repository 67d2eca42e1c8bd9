// `graft run PIPELINE.lua GRAPH -o OUT`: a Lua pipeline on a graph file.
#include "run_command.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include <fmt/core.h>

#include "command.hpp"
#include "graft/io/atomic_file.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/lua/script_host.hpp"
#include "print_error.hpp"
#include "whole_number.hpp"

namespace graft::cli {
namespace {

/// The scripts/ folder shipped with graft: $GRAFT_SCRIPTS, else share/graft/scripts next to an
/// installed binary, else the source tree this binary was built from.
std::optional<std::filesystem::path> shipped_scripts_dir() {
  if (const char* env = std::getenv("GRAFT_SCRIPTS"); env && *env) return std::filesystem::path(env);
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto installed = exe.parent_path().parent_path() / "share" / "graft" / "scripts";
    if (std::filesystem::is_directory(installed, ec)) return installed;
  }
  const std::filesystem::path source = GRAFT_SOURCE_SCRIPTS_DIR;
  if (std::filesystem::is_directory(source, ec)) return source;
  return std::nullopt;
}

}  // namespace

lua::SandboxOptions sandbox_options(const RunOptions& o) {
  lua::SandboxOptions sb;
  sb.limits = o.limits;
  sb.seed = o.seed;
  // `require` looks in the script's own directory, then --script-root folders, then the
  // scripts shipped with graft.
  std::filesystem::path own = std::filesystem::path(o.pipeline).parent_path();
  sb.roots.push_back(own.empty() ? "." : own);
  for (const auto& r : o.roots) sb.roots.emplace_back(r);
  if (auto shipped = shipped_scripts_dir()) sb.roots.push_back(*shipped);
  sb.log = [](std::string_view script, std::string_view text) { fmt::print(stderr, "[{}] {}\n", script, text); };
  return sb;
}

void add_limit_options(CLI::App& cmd, RunOptions& o) {
  cmd.add_option("--script-root", o.roots,
                 "directory `require` may load modules from (repeatable; "
                 "default: the pipeline's directory)");
  cmd.add_option("--max-instructions", o.limits.instructions, "Lua instructions per pass or check")
      ->capture_default_str()
      ->check(whole_number());
  cmd.add_option_function<std::size_t>(
         "--max-memory-mb", [&o](std::size_t mb) { o.limits.memory_bytes = mb << 20; },
         "memory budget of the script, in MiB")
      ->check(CLI::Range(std::size_t{1}, lua::kMaxMemoryMb))
      ->default_str(std::to_string(o.limits.memory_bytes >> 20));
  cmd.add_option_function<long>(
         "--max-load-ms", [&o](long ms) { o.limits.load_time = std::chrono::milliseconds(ms); },
         "wall time for loading the script (its top level and what it requires)")
      ->check(CLI::Range(1L, lua::kMaxTimeMs))
      ->default_str(std::to_string(o.limits.load_time.count()));
  cmd.add_option_function<long>(
         "--max-call-ms", [&o](long ms) { o.limits.call_time = std::chrono::milliseconds(ms); },
         "wall time per pass, check or handler (0: none)")
      ->check(CLI::Range(0L, lua::kMaxTimeMs))
      ->default_str(std::to_string(o.limits.call_time.count()));
  cmd.add_option_function<long>(
         "--max-pipeline-ms", [&o](long ms) { o.limits.pipeline_time = std::chrono::milliseconds(ms); },
         "wall time for the whole pipeline run (0: none)")
      ->check(CLI::Range(0L, lua::kMaxTimeMs))
      ->default_str(std::to_string(o.limits.pipeline_time.count()));
  cmd.add_option("--seed", o.seed, "seed of the scripts' math.random")->capture_default_str()->check(whole_number());
}

lua::ScriptHostOptions host_options(const RunOptions& o) {
  lua::ScriptHostOptions h;
  h.sandbox = sandbox_options(o);
  h.poll_interval = std::chrono::milliseconds(static_cast<long>(o.poll_seconds * 1000));
  return h;
}

int run_once(lua::ScriptHost& host, const RunOptions& o, bool watching) {
  Result<GraphModule> gm = load_graph_file(o.graph);
  if (!gm) return print_error(gm.status().message());
  lua::PipelineReport report = host.run(o.pipeline, gm.value());
  if (!o.report.empty()) {
    if (Status s = write_output_file(o.report, report.to_json()); !s) return print_error(s.message());
  }
  if (!report.ok()) {
    if (watching) {
      fmt::print("v{} error: {}\n", report.script_version, report.error->to_string());
    } else {
      if (!o.quiet) fmt::print(stderr, "{}", report.to_text());
      print_error(report.error->to_string());
    }
    return 1;
  }
  if (Status s = save_graph_file(gm.value(), o.output); !s) return print_error(s.message());
  std::FILE* summary = o.output == "-" ? stderr : stdout;  // the graph itself went to stdout
  if (watching) {
    fmt::print(summary, "v{} ok: {:.1f} ms, {} -> {} nodes (+{} -{} ~{}), wrote {}\n", report.script_version,
               report.seconds * 1e3, report.nodes_before, report.nodes_after, report.nodes_added(),
               report.nodes_removed(), report.nodes_changed(), o.output);
  } else if (o.json) {
    fmt::print("{}", report.to_json());
  } else if (!o.quiet) {
    fmt::print(summary, "{}", report.to_text());
  }
  std::fflush(summary);
  return 0;
}

int cmd_run(const RunOptions& o) {
  lua::ScriptHost host(host_options(o));
  if (Status s = host.load(o.pipeline); !s) return print_error(s.message());
  return run_once(host, o, false);
}

namespace {

class RunCommand final : public Command {
 public:
  explicit RunCommand(CLI::App& parent)
      : Command(parent.add_subcommand(
            "run", "Run a Lua pipeline on a graph and write the result (only if every pass succeeds)")) {
    app().add_option("PIPELINE", o_.pipeline, "Lua script returning graft.pipeline{...} or a pass")->required();
    app().add_option("GRAPH", o_.graph, "input graph file")->required();
    app().add_option("-o,--output", o_.output, "output graph file ('-': stdout)")->required();
    app().add_option("--report", o_.report, "also write the report as JSON to this file");
    app().add_flag("--json", o_.json, "print the report as JSON");
    app().add_flag("-q,--quiet", o_.quiet, "print nothing on success");
    add_limit_options(app(), o_);
  }

  void paths(std::vector<PathUse>& outputs, std::vector<PathUse>& inputs) const override {
    outputs.push_back({"-o", o_.output, true});
    if (!o_.report.empty()) outputs.push_back({"--report", o_.report});
    inputs.push_back({"PIPELINE", o_.pipeline});
    inputs.push_back({"GRAPH", o_.graph, true});
  }
  [[nodiscard]] bool json_to_stdout() const override { return o_.json; }
  int run() override { return cmd_run(o_); }

 private:
  RunOptions o_;
};

}  // namespace

std::unique_ptr<Command> run_command(CLI::App& app) { return std::make_unique<RunCommand>(app); }

}  // namespace graft::cli
