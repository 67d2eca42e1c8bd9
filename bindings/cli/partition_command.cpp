// `graft partition`: the support script's partitions of a graph, the reasons for what is left
// out, a picture, and the fused graph.
#include "partition_command.hpp"
#include "command.hpp"

#include <fmt/core.h>

#include <map>
#include <nlohmann/json.hpp>

#include "graft/io/atomic_file.hpp"
#include "graft/io/dot.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/ir/lint.hpp"
#include "graft/lua/support.hpp"
#include "graft/passes/fuse_partitions.hpp"
#include "graphviz.hpp"
#include "node_lookup.hpp"
#include "print_error.hpp"
#include "whole_number.hpp"

namespace graft::cli {
namespace {

using Json = nlohmann::ordered_json;

std::string reason_text(const Graph& g, const LeftOutNode& l) {
  std::string why;
  switch (l.reason) {
    case LeftOutReason::Unsupported: why = fmt::format("unsupported (rule '{}')", l.rule); break;
    case LeftOutReason::Excluded: why = "excluded by name"; break;
    case LeftOutReason::SingleNode:
      why = "its partition has a single compute node and single-node partitions are not allowed";
      break;
    case LeftOutReason::NonComputeOnly: why = "its partition has only non-compute ops"; break;
    case LeftOutReason::BelowMinimum:
      why = fmt::format("its partition has {} compute node{}, below the minimum size", l.compute_nodes,
                        l.compute_nodes == 1 ? "" : "s");
      break;
    case LeftOutReason::Bookend: why = "a non-compute op at its partition's boundary"; break;
    case LeftOutReason::GetitemOfOutside: why = "a getitem of a node in no partition"; break;
  }
  if (l.blocked_by != kNoNode && l.reason != LeftOutReason::Unsupported)
    why += fmt::format("; it cannot join the partition downstream: the path through '{}' would make a cycle",
                       g.name(l.blocked_by));
  return why;
}

Json result_json(const PartitionCommandOptions& o, const Graph& g, const Partitioning& p) {
  Json j;
  j["support"] = o.script.pipeline;
  j["graph"] = o.script.graph;
  j["nodes"] = g.size();
  Json parts = Json::array();
  for (std::size_t i = 0; i < p.partitions.size(); ++i) {
    Json e;
    e["index"] = i;
    e["module"] = o.prefix + std::to_string(i);
    Json names = Json::array();
    for (NodeId n : p.partitions[i]) names.push_back(g.name(n));
    e["size"] = p.partitions[i].size();
    e["nodes"] = std::move(names);
    parts.push_back(std::move(e));
  }
  j["partitions"] = std::move(parts);
  Json left = Json::array();
  for (const LeftOutNode& l : p.left_out) {
    Json e;
    e["node"] = g.name(l.node);
    e["reason"] = std::string(left_out_reason_name(l.reason));
    if (!l.rule.empty()) e["rule"] = l.rule;
    if (l.blocked_by != kNoNode) e["blocked_by"] = g.name(l.blocked_by);
    if (l.compute_nodes > 0) e["compute_nodes"] = l.compute_nodes;
    left.push_back(std::move(e));
  }
  j["left_out"] = std::move(left);
  return j;
}

std::string result_text(const PartitionCommandOptions& o, const Graph& g, const Partitioning& p) {
  std::size_t partitioned = 0;
  for (const auto& part : p.partitions) partitioned += part.size();
  std::string out = fmt::format("{}: {} partition{}, {} of {} nodes partitioned\n", o.script.graph, p.partitions.size(),
                                p.partitions.size() == 1 ? "" : "s", partitioned, g.size());
  for (std::size_t i = 0; i < p.partitions.size(); ++i) {
    const auto& part = p.partitions[i];
    std::string names;
    for (std::size_t k = 0; k < part.size() && k < 6; ++k) names += (k ? ", " : "") + g.name(part[k]);
    if (part.size() > 6) names += fmt::format(", ... ({} more)", part.size() - 6);
    out += fmt::format("  {}{}: {} node{}: {}\n", o.prefix, i, part.size(), part.size() == 1 ? "" : "s", names);
  }
  std::map<std::string_view, std::size_t> counts;  // ordered: the same text every run
  for (const LeftOutNode& l : p.left_out) ++counts[left_out_reason_name(l.reason)];
  std::string summary;
  for (const auto& [reason, count] : counts)
    summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", count, reason);
  out += fmt::format("left out: {} node{}{}\n", p.left_out.size(), p.left_out.size() == 1 ? "" : "s",
                     summary.empty() ? "" : " (" + summary + ")");
  if (o.explain)
    for (const LeftOutNode& l : p.left_out) out += fmt::format("  {}: {}\n", g.name(l.node), reason_text(g, l));
  return out;
}

std::string dot_text(const PartitionCommandOptions& o, const Graph& g, const Partitioning& p) {
  DotGroups groups;
  groups.of = p.partition_of;
  for (std::size_t i = 0; i < p.partitions.size(); ++i)
    groups.labels.push_back(fmt::format("{}{}: {} nodes", o.prefix, i, p.partitions[i].size()));
  return to_dot(g, groups, o.script.graph);
}

Status write_picture(const std::string& path, const std::string& dot) {
  const bool svg = path.size() >= 4 && path.compare(path.size() - 4, 4, ".svg") == 0;
  return svg ? render_svg(dot, path) : write_output_file(path, dot);
}

}  // namespace

void add_partition_options(CLI::App& cmd, PartitionCommandOptions& o) {
  cmd.add_option("SUPPORT", o.script.pipeline,
                 "Lua script returning a support rule (graft.support.*) or {support = rule, options...}")
      ->required();
  cmd.add_option("GRAPH", o.script.graph, "graph file")->required();
  cmd.add_option("-o,--output", o.output,
                 "also fuse the partitions into submodules and write the graph here ('-': stdout)");
  cmd.add_option("--dot", o.dot, "draw the partitions, one colour each with a legend (.dot, or .svg with Graphviz)");
  cmd.add_flag("--json", o.json, "print the partitions and the left-out nodes as JSON");
  cmd.add_flag("--explain", o.explain,
               "say for every node left out why: unsupported by which rule, a cycle, too small");
  cmd.add_option("--prefix", o.prefix, "name of the fused submodules: PREFIX0, PREFIX1, ...")->capture_default_str();
  cmd.add_flag("--allow-single-node", o.set_single, "keep partitions with a single compute node");
  cmd.add_flag("--skip-horizontal-fusion", o.set_skip, "merge only along data edges (no horizontal fusion)");
  cmd.add_flag("--remove-bookends", o.set_bookends, "drop non-compute ops at partition boundaries");
  cmd.add_option("--non-compute-op", o.options.non_compute_ops,
                 "a target that does not count as compute (repeatable), besides view and getitem");
  cmd.add_option("--allowed-single-node-op", o.options.allowed_single_node_partition_ops,
                 "a target that may form a partition alone (repeatable)");
  cmd.add_option("--min-size", o.options.min_partition_size,
                 "partitions with fewer compute nodes fall back (Torch-TensorRT's min_block_size)")
      ->check(whole_number());
  cmd.add_option("--max-size", o.options.max_partition_size, "cut larger partitions into pieces of this many nodes")
      ->check(whole_number());
  cmd.add_option("--exclude", o.options.exclude_nodes,
                 "never partition this node (by name, or by node path in the root graph; repeatable)");
  add_limit_options(cmd, o.script);
}

int cmd_partition(const PartitionCommandOptions& o) {
  Result<GraphModule> loaded = load_graph_file(o.script.graph);
  if (!loaded) return print_error(loaded.status().message());
  GraphModule& gm = loaded.value();
  if (Status s = lint(gm); !s) {
    s.diagnostic().file = o.script.graph;
    return print_error(s.message() + " (graft lint rejects the graph)");
  }
  auto sandbox = lua::Sandbox::create(sandbox_options(o.script));
  if (!sandbox) return print_error(sandbox.status().message());
  if (Status s = sandbox.value()->load_file(o.script.pipeline); !s) return print_error(s.message());
  Partitioning result;
  Status s =
      lua::with_support(*sandbox.value(), gm, [&](const OperatorSupport& support, const PartitionOptions& from_script) {
        PartitionOptions options = from_script;
        const PartitionOptions& cli = o.options;
        if (o.set_single) options.allows_single_node_partition = true;
        if (o.set_skip) options.skip_horizontal_fusion = true;
        if (o.set_bookends) options.remove_bookend_non_compute_ops = true;
        if (!cli.non_compute_ops.empty()) options.non_compute_ops = cli.non_compute_ops;
        if (!cli.allowed_single_node_partition_ops.empty())
          options.allowed_single_node_partition_ops = cli.allowed_single_node_partition_ops;
        if (cli.min_partition_size > 0) options.min_partition_size = cli.min_partition_size;
        if (cli.max_partition_size > 0) options.max_partition_size = cli.max_partition_size;
        for (const std::string& excluded : cli.exclude_nodes) {  // a name or a node path in the root graph
          Result<NodeId> n = find_root_node(gm, excluded, o.script.graph);
          if (!n) return n.status();
          options.exclude_nodes.push_back(gm.graph.name(n.value()));
        }
        Result<Partitioning> p = propose_partitions(gm, support, options);
        if (!p) return Status::error(fmt::format("{}: {}", o.script.graph, p.status().message()));
        result = std::move(p).value();
        return Status::ok();
      });
  if (!s) return print_error(s.message());

  // Everything is worked out before anything is written: a refused fusion writes no picture.
  std::string printed = o.json ? result_json(o, gm.graph, result).dump(2) + "\n" : result_text(o, gm.graph, result);
  const std::string picture = o.dot.empty() ? std::string() : dot_text(o, gm.graph, result);
  if (!o.output.empty()) {
    Result<std::vector<FusedPartition>> fused = fuse_by_partitions(gm, result.partitions, o.prefix);
    if (!fused) return print_error(fmt::format("{}: {}", o.script.graph, fused.status().message()));
    if (Status l = lint(gm); !l) return print_error("the fused graph is not valid: " + l.message());
  }
  if (!o.dot.empty())
    if (Status d = write_picture(o.dot, picture); !d) return print_error(d.message());
  if (!o.output.empty())
    if (Status w = save_graph_file(gm, o.output); !w) return print_error(w.message());
  if (o.quiet) return 0;
  if (o.output != "-") fmt::print("{}", printed);
  else fmt::print(stderr, "{}", printed);
  return 0;
}

namespace {

class PartitionCommand final : public Command {
 public:
  explicit PartitionCommand(CLI::App& parent)
      : Command(parent.add_subcommand(
            "partition",
            "Cut a graph into the partitions a backend supports (torch.fx CapabilityBasedPartitioner semantics); "
            "say why each other node is left out; optionally fuse them into submodules")) {
    add_partition_options(app(), o_);
  }

  void paths(std::vector<PathUse>& outputs, std::vector<PathUse>& inputs) const override {
    if (!o_.output.empty()) outputs.push_back({"-o", o_.output, true});
    if (!o_.dot.empty()) outputs.push_back({"--dot", o_.dot});
    inputs.insert(inputs.end(), {{"SUPPORT", o_.script.pipeline}, {"GRAPH", o_.script.graph, true}});
  }
  int run() override { return cmd_partition(o_); }

 private:
  PartitionCommandOptions o_;
};

}  // namespace

std::unique_ptr<Command> partition_command(CLI::App& app) { return std::make_unique<PartitionCommand>(app); }

}  // namespace graft::cli
