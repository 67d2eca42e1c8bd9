// The hierarchy of a graph file as a tree (graphpatch's `pg.graph` view).
#include "graft/io/module_tree.hpp"

#include <fmt/core.h>

#include "graft/ir/node_path.hpp"

#include <vector>

namespace graft {
namespace {

std::string short_class(const std::string& qualified) {
  const std::size_t dot = qualified.rfind('.');
  return dot == std::string::npos ? qualified : qualified.substr(dot + 1);
}

std::string dim_text(const Dim& d) { return d.is_symbolic() ? d.symbol_name() : std::to_string(d.value()); }

std::string tensor_text(const Dims& shape, const std::string& dtype) {
  std::string out = "Tensor(";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + dim_text(shape[i]);
  if (dtype != "float32") out += (shape.size() ? ", dtype=" : "dtype=") + dtype;
  return out + ")";
}

std::string value_text(const ValueMeta& v) {
  switch (v.kind) {
    case ValueMeta::Kind::Tensor: return tensor_text(v.tensor.shape, v.tensor.dtype.str());
    case ValueMeta::Kind::Tuple: return fmt::format("tuple({})", v.elements.size());
    case ValueMeta::Kind::None: break;
  }
  return "";
}

class TreePrinter {
 public:
  TreePrinter(const GraphModule& gm, const ModuleTreeOptions& o) : gm_(gm), o_(o) {}

  Result<std::string> print_at(const std::string& path) {
    Result<NodeLocation> at = resolve_node_path(gm_, path);
    if (!at) return at.status();
    const Graph& g = at->module.empty() ? gm_.graph : *gm_.modules.find(at->module)->graph;
    node(g, at->node, at->module, "", true, 0);
    return std::move(out_);
  }

  std::string print() {
    const ModuleInfo* root = gm_.modules.find("");
    out_ = "<root>";
    if (root && !root->class_name.empty()) out_ += ": " + short_class(root->class_name);
    out_ += '\n';
    graph(gm_.graph, "", "", 0);
    return std::move(out_);
  }

 private:
  void line(const std::string& prefix, bool last, const std::string& name, const std::string& what) {
    out_ += prefix + (last ? "└─" : "├─") + name;
    if (!what.empty()) out_ += ": " + what;
    out_ += '\n';
  }

  static std::string join(const std::string& path, const std::string& target) {
    return path.empty() ? target : path + "." + target;
  }

  void graph(const Graph& g, const std::string& path, const std::string& prefix, std::size_t depth) {
    std::vector<NodeId> nodes;
    nodes.reserve(g.size());
    for (NodeId n : g.nodes()) nodes.push_back(n);
    for (std::size_t i = 0; i < nodes.size(); ++i) node(g, nodes[i], path, prefix, i + 1 == nodes.size(), depth);
  }

  void node(const Graph& g, NodeId n, const std::string& path, const std::string& prefix, bool last,
            std::size_t depth) {
    const std::string child_prefix = prefix + (last ? "  " : "│ ");
    const ValueMeta& value = g.meta(n).tensor_meta;
    if (g.op(n) == OpKind::CallModule) {
      const ModuleInfo* m = gm_.modules.find(join(path, g.target(n)));
      if (m && (m->graph || !m->opaque.empty())) {
        std::string what = short_class(m->class_name);
        if (!m->opaque.empty()) what += " (opaque: " + m->opaque + ")";
        line(prefix, last, g.name(n), what);
        if (depth >= o_.max_depth) return;
        if (m->graph) graph(*m->graph, m->path, child_prefix, depth + 1);
        else opaque(*m, value, child_prefix);
        return;
      }
    }
    line(prefix, last, g.name(n), o_.shapes ? value_text(value) : "");
    if (value.kind == ValueMeta::Kind::Tuple && o_.shapes && g.op(n) == OpKind::Output)
      for (std::size_t i = 0; i < value.elements.size(); ++i)
        line(child_prefix, i + 1 == value.elements.size(), std::to_string(i), value_text(value.elements[i]));
  }

  // What stays visible of a module without a graph: its tensors and its result.
  void opaque(const ModuleInfo& m, const ValueMeta& result, const std::string& prefix) {
    for (const TensorSpec& t : m.parameters)
      line(prefix, false, t.name, o_.shapes ? tensor_text(t.shape, t.dtype.str()) : "");
    for (const TensorSpec& t : m.buffers)
      line(prefix, false, t.name, o_.shapes ? tensor_text(t.shape, t.dtype.str()) : "");
    line(prefix, true, "output", o_.shapes ? value_text(result) : "");
  }

  const GraphModule& gm_;
  const ModuleTreeOptions& o_;
  std::string out_;
};

}  // namespace

Result<std::string> module_tree(const GraphModule& gm, const ModuleTreeOptions& options) {
  if (!options.at.empty()) return TreePrinter(gm, options).print_at(options.at);
  return TreePrinter(gm, options).print();
}

}  // namespace graft
