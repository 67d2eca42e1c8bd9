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

// Pastel fills, light enough for black text (ColorBrewer's Set3).
constexpr const char* kPalette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                                    "#b3de69", "#fccde5", "#bc80bd", "#ccebc5", "#ffed6f", "#d9d9d9"};
constexpr std::size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

std::string render(const Graph& g, const DotGroups* groups, std::string_view graph_name) {
  std::vector<std::uint32_t> pos(g.num_slots(), 0);  // local: a const graph's cache stays untouched
  std::uint32_t next = 0;
  for (NodeId n : g.nodes()) pos[n] = next++;
  std::string out = "digraph \"" + dot_escape(graph_name) + "\" {\n";
  out += "  node [shape=box, style=\"rounded,filled\", fontname=\"monospace\", fontsize=10];\n";
  auto style_of = [&](std::uint32_t group) -> std::string {
    const char* border = (group / kPaletteSize) % 2 == 0 ? "rounded,filled" : "rounded,filled,bold";
    return std::string("fillcolor=\"") + kPalette[group % kPaletteSize] + "\", style=\"" + border + "\"";
  };
  for (NodeId n : g.nodes()) {
    std::string label = g.name(n) + "\n" + std::string(op_kind_name(g.op(n)));
    if (g.op(n) != OpKind::Output && g.op(n) != OpKind::Placeholder) label += "\n" + g.target(n);
    std::string style = std::string("fillcolor=\"") + fill_for(g.op(n)) + "\"";
    if (groups != nullptr) {
      std::uint32_t group = n < groups->of.size() ? groups->of[n] : kNoNode;
      style = group != kNoNode ? style_of(group) : "fillcolor=\"#ffffff\", style=\"rounded,filled,dashed\"";
    }
    out += "  n" + std::to_string(pos[n]) + " [label=\"" + dot_escape(label) + "\", " + style + "];\n";
  }
  for (NodeId n : g.nodes()) {
    std::vector<std::uint32_t> sources;  // distinct inputs by position: deterministic, not quadratic
    for (NodeId i : g.inputs(n)) sources.push_back(pos[i]);
    std::sort(sources.begin(), sources.end());
    sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
    for (std::uint32_t i : sources) out += "  n" + std::to_string(i) + " -> n" + std::to_string(pos[n]) + ";\n";
  }
  if (groups != nullptr) {
    out += "  subgraph cluster_legend {\n    label=\"legend\"; fontname=\"monospace\"; fontsize=10;\n";
    for (std::size_t i = 0; i < groups->labels.size(); ++i)
      out += "    legend" + std::to_string(i) + " [label=\"" + dot_escape(groups->labels[i]) + "\", " +
          style_of(static_cast<std::uint32_t>(i)) + "];\n";
    out += "    legend_others [label=\"" + dot_escape(groups->others) +
        "\", fillcolor=\"#ffffff\", style=\"rounded,filled,dashed\"];\n  }\n";
  }
  out += "}\n";
  return out;
}

}  // namespace

std::string to_dot(const Graph& g, std::string_view graph_name) { return render(g, nullptr, graph_name); }

std::string to_dot(const Graph& g, const DotGroups& groups, std::string_view graph_name) {
  return render(g, &groups, graph_name);
}

}  // namespace graft
