// Graph statistics for `graft stats`.
#include <algorithm>
#include <array>
#include <map>

#include "graft/io/json_text.hpp"
#include "graft/io/stats.hpp"

namespace graft {

GraphStats compute_stats(const GraphModule& gm) {
  const Graph& g = gm.graph;
  GraphStats s;
  s.nodes = g.size();
  std::array<std::size_t, 6> ops{};
  std::map<std::string, std::size_t> targets;
  for (NodeId n : g.nodes()) {
    ++ops[static_cast<std::size_t>(g.op(n))];
    switch (g.op(n)) {
      case OpKind::CallFunction: ++targets[g.target(n)]; break;
      case OpKind::CallMethod: ++targets["method:" + g.target(n)]; break;
      case OpKind::CallModule: {
        const ModuleInfo* m = gm.modules.find(g.target(n));
        ++targets["module:" + (m ? m->class_name : g.target(n))];
        break;
      }
      default: break;
    }
  }
  for (std::size_t i = 0; i < ops.size(); ++i)
    s.by_op.emplace_back(std::string(op_kind_name(static_cast<OpKind>(i))), ops[i]);
  s.by_target.assign(targets.begin(), targets.end());
  std::stable_sort(s.by_target.begin(), s.by_target.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  s.modules = gm.modules.size();
  for (const ModuleInfo& m : gm.modules.entries()) {
    s.parameter_tensors += m.parameters.size();
    s.buffer_tensors += m.buffers.size();
  }
  s.parameter_elements = gm.modules.parameter_count();
  return s;
}

std::string GraphStats::to_json() const {
  std::string out = "{\"nodes\":" + std::to_string(nodes) + ",\"by_op\":{";
  for (std::size_t i = 0; i < by_op.size(); ++i) {
    if (i) out += ',';
    detail::append_json_string(out, by_op[i].first);
    out += ':' + std::to_string(by_op[i].second);
  }
  out += "},\"by_target\":{";
  for (std::size_t i = 0; i < by_target.size(); ++i) {
    if (i) out += ',';
    detail::append_json_string(out, by_target[i].first);
    out += ':' + std::to_string(by_target[i].second);
  }
  out += "},\"modules\":" + std::to_string(modules) + ",\"parameter_tensors\":" + std::to_string(parameter_tensors) +
      ",\"buffer_tensors\":" + std::to_string(buffer_tensors) +
      ",\"parameter_elements\":" + std::to_string(parameter_elements) + "}\n";
  return out;
}

std::string GraphStats::to_text(std::size_t top_targets) const {
  std::string out = "nodes: " + std::to_string(nodes) + " (";
  bool first = true;
  for (const auto& [op, count] : by_op) {
    if (count == 0) continue;
    if (!first) out += ", ";
    first = false;
    out += op + " " + std::to_string(count);
  }
  out += ")\n";
  out += "modules: " + std::to_string(modules) + "; parameters: " + std::to_string(parameter_tensors) + " tensors, " +
      std::to_string(parameter_elements) + " elements; buffers: " + std::to_string(buffer_tensors) + " tensors\n";
  if (!by_target.empty()) {
    out += "most used targets:\n";
    for (std::size_t i = 0; i < by_target.size() && i < top_targets; ++i)
      out += "  " +
          std::string(std::max<int>(0, 5 - static_cast<int>(std::to_string(by_target[i].second).size())), ' ') +
          std::to_string(by_target[i].second) + "  " + by_target[i].first + "\n";
    if (by_target.size() > top_targets)
      out += "  ... and " + std::to_string(by_target.size() - top_targets) + " more targets\n";
  }
  return out;
}

}  // namespace graft
