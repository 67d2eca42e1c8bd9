// Graphviz DOT output: a vertex per node, an edge per distinct input.
#include <algorithm>

#include "graft/io/dot.hpp"

namespace graft {

namespace {

std::string dot_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

const char* fill_for(OpKind op) {
  switch (op) {
    case OpKind::Placeholder: return "#d5e8d4";
    case OpKind::Output: return "#f8cecc";
    case OpKind::GetAttr: return "#fff2cc";
    case OpKind::CallModule: return "#dae8fc";
    default: return "#ffffff";
  }
}

}  // namespace

std::string to_dot(const Graph& g, std::string_view graph_name) {
  std::vector<std::uint32_t> pos(g.num_slots(), 0);  // local: a const graph's cache stays untouched
  std::uint32_t next = 0;
  for (NodeId n : g.nodes()) pos[n] = next++;
  std::string out = "digraph \"" + dot_escape(graph_name) + "\" {\n";
  out += "  node [shape=box, style=\"rounded,filled\", fontname=\"monospace\", fontsize=10];\n";
  for (NodeId n : g.nodes()) {
    std::string label = g.name(n) + "\n" + std::string(op_kind_name(g.op(n)));
    if (g.op(n) != OpKind::Output && g.op(n) != OpKind::Placeholder) label += "\n" + g.target(n);
    out += "  n" + std::to_string(pos[n]) + " [label=\"" + dot_escape(label) + "\", fillcolor=\"" + fill_for(g.op(n)) +
        "\"];\n";
  }
  for (NodeId n : g.nodes()) {
    std::vector<std::uint32_t> sources;  // distinct inputs by position: deterministic, not quadratic
    for (NodeId i : g.inputs(n)) sources.push_back(pos[i]);
    std::sort(sources.begin(), sources.end());
    sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
    for (std::uint32_t i : sources) out += "  n" + std::to_string(i) + " -> n" + std::to_string(pos[n]) + ";\n";
  }
  out += "}\n";
  return out;
}

}  // namespace graft
