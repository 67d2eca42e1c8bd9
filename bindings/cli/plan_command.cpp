// `graft plan`: the memory plan of a graph, as a summary, JSON and a picture.
#include "plan_command.hpp"
#include "command.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>

#include "graft/io/atomic_file.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/ir/lint.hpp"
#include "graft/passes/memory_schedule.hpp"
#include "plan_svg.hpp"
#include "print_error.hpp"
#include "whole_number.hpp"

namespace graft::cli {
namespace {

using Json = nlohmann::ordered_json;

/// A symbol as sizes name it: a letter or '_', then letters, digits and '_' (`s0`, `u1`).
bool is_symbol_name(std::string_view name) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  return !name.empty() && std::isdigit(static_cast<unsigned char>(name.front())) == 0 &&
      std::all_of(name.begin(), name.end(), word);
}

std::string mib(std::uint64_t bytes) { return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / 1048576.0); }

std::string buffer_name(const Graph& g, const Buffer& b) {
  return b.element == 0 ? g.name(b.node) : fmt::format("{}[{}]", g.name(b.node), b.element);
}

Json plan_json(const PlanCommandOptions& o, const Graph& g, const StorageMap& storage, const Liveness& l,
               const MemoryPlan& p, const std::optional<ScheduleReport>& schedule) {
  Json j;
  j["graph"] = o.graph;
  j["nodes"] = l.steps.size();
  j["alignment"] = p.alignment;
  j["arena"] = p.arena;
  j["lower_bound"] = p.lower_bound;
  j["gap_percent"] = p.gap_percent();
  j["fragmentation"] = p.arena - p.lower_bound;
  j["planner"] = std::string(planner_name(p.planner));
  j["optimal"] = p.optimal;
  j["peak_step"] = p.peak_step;
  j["peak_node"] = p.peak_step < l.steps.size() ? g.name(l.steps[p.peak_step]) : std::string();
  Json runs = Json::array();
  for (const PlannerRun& r : p.runs) {
    Json e;
    e["planner"] = std::string(planner_name(r.planner));
    e["arena"] = r.arena;
    e["gap_percent"] = p.lower_bound == 0
        ? 0.0
        : 100.0 * static_cast<double>(r.arena - p.lower_bound) / static_cast<double>(p.lower_bound);
    if (o.timings) e["milliseconds"] = r.milliseconds;
    if (r.planner == Planner::Exact) e["proved_optimal"] = r.proved_optimal;
    runs.push_back(std::move(e));
  }
  j["runs"] = std::move(runs);
  if (schedule) {
    Json s;
    s["peak_before"] = schedule->peak_before;
    s["peak_after"] = schedule->peak_after;
    s["moved"] = schedule->moved;
    j["schedule"] = std::move(s);
  }
  Json peak = Json::array();
  for (std::uint32_t b : buffers_live_at(l, p.peak_step)) peak.push_back(buffer_name(g, l.buffers[b]));
  j["live_at_peak"] = std::move(peak);
  Json buffers = Json::array();
  for (std::uint32_t b = 0; b < l.buffers.size(); ++b) {
    const Buffer& buf = l.buffers[b];
    Json e;
    e["node"] = g.name(buf.node);
    e["element"] = buf.element;
    e["bytes"] = buf.bytes;
    e["first"] = buf.first;
    e["last"] = buf.last;
    e["kind"] = std::string(buffer_kind_name(buf.kind));
    if (p.offsets[b] == kNotPlanned) e["offset"] = nullptr;
    else e["offset"] = p.offsets[b];
    buffers.push_back(std::move(e));
  }
  j["buffers"] = std::move(buffers);
  // node -> the buffers its value refers to (its storage), by name: a std::map keeps this linear
  // where an ordered_json object would search its keys once per node
  nlohmann::json values = nlohmann::json::object();
  BufferSetWalker walker(storage);
  for (NodeId n : l.steps)
    if (storage.value[n] != 0) values[g.name(n)] = walker.sorted_buffers(storage.value[n]);
  j["values"] = values;  // an nlohmann::json into an ordered_json: converted, not moved
  Json unknown = Json::array();
  for (NodeId n : storage.unknown_aliasing) unknown.push_back(g.name(n));
  j["unknown_aliasing"] = std::move(unknown);
  return j;
}

void print_summary(const PlanCommandOptions& o, const Graph& g, const Liveness& l, const StorageMap& s,
                   const MemoryPlan& p, const std::optional<ScheduleReport>& schedule) {
  std::size_t planned = 0, shared = 0;
  for (const Buffer& b : l.buffers) planned += b.planned && b.bytes > 0 ? 1 : 0;
  for (NodeId n : l.steps)
    if (s.creates[n].first == s.creates[n].second && s.value[n] != 0) ++shared;
  fmt::print("{}: {} nodes, {} tensors planned, {} values share another's storage (views, in-place)\n", o.graph,
             l.steps.size(), planned, shared);
  if (schedule)
    fmt::print("schedule: peak {} -> {} ({} nodes moved)\n", mib(schedule->peak_before), mib(schedule->peak_after),
               schedule->moved);
  const std::string peak_node = p.peak_step < l.steps.size() ? g.name(l.steps[p.peak_step]) : std::string("-");
  fmt::print("lower bound: {} ({} bytes) at step {} ({})\n", mib(p.lower_bound), p.lower_bound, p.peak_step, peak_node);
  fmt::print("{:<10} {:>14} {:>9} {:>10}\n", "planner", "arena", "gap", "time");
  for (const PlannerRun& r : p.runs) {
    const double gap = p.lower_bound == 0
        ? 0.0
        : 100.0 * static_cast<double>(r.arena - p.lower_bound) / static_cast<double>(p.lower_bound);
    fmt::print("{:<10} {:>14} {:>8.2f}% {:>7.2f} ms{}\n", planner_name(r.planner), mib(r.arena), gap, r.milliseconds,
               r.planner == Planner::Exact
                   ? (r.proved_optimal ? "  (proved least)" : "  (search budget spent: best so far)")
                   : "");
  }
  fmt::print(
      "plan: {} from '{}', {:.2f}% above the lower bound{}; fragmentation {} bytes ({:.2f}% of the arena); "
      "alignment {}\n",
      mib(p.arena), planner_name(p.planner), p.gap_percent(), p.optimal ? " (optimal)" : "", p.arena - p.lower_bound,
      p.arena == 0 ? 0.0 : 100.0 * static_cast<double>(p.arena - p.lower_bound) / static_cast<double>(p.arena),
      p.alignment);
  const std::vector<std::uint32_t> live = buffers_live_at(l, p.peak_step);
  fmt::print("live at the peak ({} tensors):\n", live.size());
  for (std::size_t i = 0; i < live.size() && i < o.top; ++i) {
    const Buffer& b = l.buffers[live[i]];
    fmt::print("  {:>12}  {:<28} {:<12} steps {}-{}\n", mib(b.bytes), buffer_name(g, b), buffer_kind_name(b.kind),
               b.first, b.last);
  }
  if (live.size() > o.top) fmt::print("  ... {} more (--top)\n", live.size() - o.top);
  if (!s.unsized.empty())
    fmt::print(stderr,
               "note: {} call{} without tensor meta (numbers, or tensors whose meta was not recorded) planned as "
               "allocating nothing (first: '{}')\n",
               s.unsized.size(), s.unsized.size() == 1 ? "" : "s", g.name(s.unsized.front()));
  if (!s.unknown_aliasing.empty())
    fmt::print(
        "{} call{} no schema describes (first: '{}') get their own storage and keep their inputs live "
        "with them\n",
        s.unknown_aliasing.size(), s.unknown_aliasing.size() == 1 ? "" : "s", g.name(s.unknown_aliasing.front()));
}

}  // namespace

void add_plan_options(CLI::App& cmd, PlanCommandOptions& o) {
  cmd.add_option("graph", o.graph, "graph file (.json)")->required();
  cmd.add_flag("--json", o.json, "print the whole plan as JSON (every tensor's node, bytes, steps and offset)");
  cmd.add_option("-o,--output", o.output, "write the whole plan as JSON to this file ('-' = stdout)");
  cmd.add_flag("--timings", o.timings,
               "put each planner's milliseconds in the JSON (left out by default: the same graph, the same bytes)");
  cmd.add_option("--svg", o.svg, "draw the plan as SVG: steps across, addresses up, a rectangle per tensor");
  cmd.add_option("--planner", o.planner,
                 "size, breadth, lifetime, refine, exact or best (all of them, smallest arena wins)")
      ->capture_default_str();
  cmd.add_option("--alignment", o.plan.alignment, "bytes every offset is a multiple of (a power of two)")
      ->capture_default_str()
      ->check(whole_number());
  cmd.add_option("--exact-max", o.plan.exact_max_buffers, "best also runs the exact search up to this many tensors")
      ->capture_default_str()
      ->check(whole_number());
  cmd.add_option("--exact-steps", o.plan.exact_max_steps,
                 "search nodes the exact search may visit (a budget in steps: the same graph, the same plan)")
      ->capture_default_str()
      ->check(whole_number());
  cmd.add_option("--time-limit", o.plan.exact_time_limit_ms, "a cap on the exact search's milliseconds")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600000.0));
  cmd.add_option("--symbol", o.symbols, "a value for a symbolic size, NAME=VALUE (repeatable): --symbol s0=32");
  cmd.add_flag("--plan-inputs", o.liveness.plan_inputs, "place the graph's inputs in the arena too");
  cmd.add_flag("--plan-parameters", o.liveness.plan_parameters, "place parameters and buffers (get_attr) too");
  cmd.add_flag("--no-outputs", o.no_outputs, "leave the graph's outputs out of the arena (their caller owns them)");
  cmd.add_flag("--schedule", o.schedule, "first reorder nodes to lower the peak (kept only if it is lower)");
  cmd.add_option("--schedule-output", o.graph_output, "with --schedule: write the reordered graph here");
  cmd.add_option("--top", o.top, "tensors listed at the peak")->capture_default_str()->check(whole_number());
}

int cmd_plan(PlanCommandOptions o) {
  for (const std::string& s : o.symbols) {
    const std::size_t eq = s.find('=');
    if (eq == std::string::npos || !is_symbol_name(std::string_view(s).substr(0, eq)) || eq + 1 == s.size())
      return print_error(fmt::format("--symbol '{}': expected NAME=INTEGER, e.g. s0=32", s));
    const std::string name = s.substr(0, eq), text = s.substr(eq + 1);
    // A size: negative, past 64 bits or not a number, it would size every tensor that uses it
    // as empty (or as a wrapped-around number), and the plan would say nothing of it.
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    std::uint64_t value = 0;
    if (!parse_whole_number(text, 0, kMax, value))
      return print_error(
          fmt::format("--symbol '{}': the value '{}' is not a size (a whole number from 0 to {})", s, text, kMax));
    for (const auto& [given, v] : o.liveness.symbols)
      if (given == name)
        return print_error(fmt::format("--symbol '{}': {} is already given ({}={})", s, name, name, v));
    o.liveness.symbols.emplace_back(name, static_cast<std::int64_t>(value));
  }
  o.liveness.plan_outputs = !o.no_outputs;
  Result<Planner> planner = parse_planner(o.planner);
  if (!planner) return print_error("--planner: " + planner.status().message());
  o.plan.planner = *planner;
  if (!o.graph_output.empty() && !o.schedule) return print_error("--schedule-output needs --schedule");
  if (Status s = check_alignment(o.plan.alignment); !s) return print_error("--alignment: " + s.message());
  Result<GraphModule> gm = load_graph_file(o.graph);
  if (!gm) return print_error(gm.status().message());
  if (Status s = lint(*gm); !s) return print_error(fmt::format("{}: {}", o.graph, s.message()));
  Graph& g = gm->graph;
  const OpSchemaRegistry& ops = OpSchemaRegistry::builtin();
  o.liveness.modules = &gm->modules;
  std::optional<ScheduleReport> schedule;
  if (o.schedule) {
    Result<ScheduleReport> r = schedule_for_memory(g, ops, o.liveness, o.plan.alignment);
    if (!r) return print_error(fmt::format("{}: {}", o.graph, r.status().message()));
    schedule = *r;
  }
  Result<StorageMap> storage = map_storage(g, ops, o.liveness);
  if (!storage) return print_error(fmt::format("{}: {}", o.graph, storage.status().message()));
  const Liveness l = live_ranges(*storage, g.node_list(), g.num_slots());
  Result<MemoryPlan> plan = plan_memory(l, o.plan);
  if (!plan) return print_error(fmt::format("{}: {}", o.graph, plan.status().message()));
  if (Status s = check_plan(g, l, *plan); !s)  // a planner bug must never reach a user as a plan
    return print_error(fmt::format("{}: the plan is invalid (please report it): {}", o.graph, s.message()));
  if (!o.graph_output.empty())
    if (Status s = save_graph_file(*gm, o.graph_output); !s) return print_error(s.message());
  // The JSON only when asked for: it lists every buffer each value may use, which for a long chain
  // of calls of unknown aliasing (each may be a view of all before it) is far more than the plan.
  Json j;
  if (o.json || !o.output.empty()) j = plan_json(o, g, *storage, l, *plan, schedule);
  if (!o.output.empty())
    if (Status s = write_output_file(o.output, j.dump(1) + "\n"); !s) return print_error(s.message());
  if (!o.svg.empty())
    if (Status s = write_output_file(o.svg, plan_svg(g, l, *plan, o.graph)); !s) return print_error(s.message());
  if (o.json) fmt::print("{}\n", j.dump(1));
  else if (o.output != "-" && o.svg != "-") print_summary(o, g, l, *storage, *plan, schedule);
  return 0;
}

namespace {

class PlanCommand final : public Command {
 public:
  explicit PlanCommand(CLI::App& parent)
      : Command(parent.add_subcommand(
            "plan",
            "Plan the graph's tensors into one memory arena: live ranges (views and in-place results share "
            "storage), the lower bound, each planner's arena, the tensors live at the peak; optionally reorder "
            "nodes first")) {
    add_plan_options(app(), o_);
  }

  void paths(std::vector<PathUse>& outputs, std::vector<PathUse>& inputs) const override {
    if (!o_.output.empty()) outputs.push_back({"-o", o_.output});
    if (!o_.svg.empty()) outputs.push_back({"--svg", o_.svg});
    if (!o_.graph_output.empty()) outputs.push_back({"--schedule-output", o_.graph_output, true});
    inputs.push_back({"GRAPH", o_.graph, true});
  }
  [[nodiscard]] bool json_to_stdout() const override { return o_.json; }
  int run() override { return cmd_plan(o_); }

 private:
  PlanCommandOptions o_;
};

}  // namespace

std::unique_ptr<Command> plan_command(CLI::App& app) { return std::make_unique<PlanCommand>(app); }

}  // namespace graft::cli
