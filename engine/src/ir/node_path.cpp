// resolve_node_path: a dotted path through the module hierarchy to one node.
#include "graft/ir/node_path.hpp"

#include <vector>

namespace graft {
namespace {

std::vector<std::string> split(std::string_view path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t dot = path.find('.'); dot != std::string_view::npos; dot = path.find('.', start)) {
    out.emplace_back(path.substr(start, dot - start));
    start = dot + 1;
  }
  out.emplace_back(path.substr(start));
  return out;
}

/// The node of `g` called `name`, or the placeholder whose argument is `name`; kNoNode if none.
NodeId node_named(const Graph& g, const std::string& name) {
  if (NodeId n = g.find(name); n != kNoNode) return n;
  for (NodeId n : g.nodes())
    if (g.op(n) == OpKind::Placeholder && g.target(n) == name) return n;
  return kNoNode;
}

}  // namespace

Result<NodeLocation> resolve_node_path(const Graph& root, const ModuleTable& modules, std::string_view path) {
  const std::vector<std::string> segments = split(path);
  for (const std::string& s : segments)
    if (s.empty()) return Status::error("node path " + quoted_text(path) + ": an empty segment");
  NodeLocation at;
  const Graph* g = &root;
  std::size_t i = 0;
  while (true) {
    const NodeId named = node_named(*g, segments[i]);
    if (named != kNoNode && i + 1 == segments.size()) {
      at.node = named;
      return at;
    }
    // A call to descend through: the node named by this segment, or the call whose target is
    // the longest run of segments from here (`layers.3`).
    NodeId call = named != kNoNode && g->op(named) == OpKind::CallModule ? named : kNoNode;
    std::size_t next = i + 1;
    if (call == kNoNode) {
      std::string target;
      for (std::size_t k = i; k + 1 < segments.size(); ++k) {
        target = k == i ? segments[k] : target + "." + segments[k];
        for (NodeId n : g->nodes())
          if (g->op(n) == OpKind::CallModule && g->target(n) == target) {
            call = n;
            next = k + 1;
          }
      }
    }
    if (call == kNoNode || next >= segments.size()) {
      const std::string where = at.module.empty() ? "the root graph" : "the graph of module " + quoted_text(at.module);
      if (named != kNoNode)
        return Status::error("node path " + quoted_text(path) + ": node " + quoted_text(segments[i]) + " in " + where +
                             " is not a module call, so the path cannot go on to " + quoted_text(segments[i + 1]));
      return Status::error("node path " + quoted_text(path) + ": no node " + quoted_text(segments[i]) + " in " + where);
    }
    const std::string module = qualify(at.module, g->target(call));
    const ModuleInfo* m = modules.find(module);
    if (m == nullptr || !m->graph)
      return Status::error(
          "node path " + quoted_text(path) + ": module " + quoted_text(module) + " has no graph of its own" +
          (m && !m->opaque.empty() ? " (opaque: " + m->opaque + ")" : "") + ", so its nodes have no names");
    at.module = module;
    g = &*m->graph;
    i = next;
  }
}

}  // namespace graft
