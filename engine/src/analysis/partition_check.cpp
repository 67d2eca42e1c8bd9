// check_partitions: strong components of the contracted graph.
#include "graft/analysis/partition_check.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>
#include <deque>
#include <string>

namespace graft {
namespace {

using Contracted = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

std::string describe_partition(const Graph& g, const std::vector<NodeId>& part, std::size_t index) {
  std::string names;
  for (std::size_t i = 0; i < part.size() && i < 4; ++i) names += (i ? ", " : "") + g.name(part[i]);
  if (part.size() > 4) names += ", ...";
  return "partition " + std::to_string(index) + " {" + names + "}";
}

}  // namespace

Status check_partitions(const Graph& g, const std::vector<std::vector<NodeId>>& partitions) {
  const auto count = static_cast<std::uint32_t>(partitions.size());
  std::vector<std::uint32_t> vertex(g.num_slots(), kNoNode);
  for (std::uint32_t p = 0; p < count; ++p) {
    for (NodeId n : partitions[p]) {
      if (!g.is_alive(n))
        return Status::error("partition " + std::to_string(p) + " lists a node that is not in the graph");
      if (g.op(n) == OpKind::Placeholder || g.op(n) == OpKind::Output)
        return Status::node_error(
            g.name(n),
            "partition " + std::to_string(p) + ": a " + std::string(op_kind_name(g.op(n))) + " node cannot be fused");
      if (vertex[n] != kNoNode)
        return Status::node_error(
            g.name(n), "is in partition " + std::to_string(vertex[n]) + " and in partition " + std::to_string(p));
      vertex[n] = p;
    }
  }
  std::vector<NodeId> outside;  // vertex count + i -> node
  for (NodeId n : g.nodes())
    if (vertex[n] == kNoNode) {
      vertex[n] = count + static_cast<std::uint32_t>(outside.size());
      outside.push_back(n);
    }
  const std::size_t vertices = count + outside.size();
  Contracted c(vertices);
  for (NodeId n : g.nodes())
    for (NodeId u : g.users(n))
      if (vertex[n] != vertex[u]) boost::add_edge(vertex[n], vertex[u], c);
  std::vector<std::size_t> component(vertices);
  std::size_t components = boost::strong_components(
      c, boost::make_iterator_property_map(component.begin(), boost::get(boost::vertex_index, c)));
  if (components == vertices) return Status::ok();

  // Some partition lies on a cycle (the graph itself has none): walk one, breadth first.
  std::uint32_t start = 0;
  std::vector<std::size_t> size(vertices, 0);
  for (std::size_t v = 0; v < vertices; ++v) ++size[component[v]];
  while (start < count && size[component[start]] < 2) ++start;
  if (start == count) return Status::error("the graph has a cycle outside every partition");
  std::vector<std::size_t> parent(vertices, vertices);
  std::deque<std::size_t> queue{start};
  std::size_t last = vertices;
  while (!queue.empty() && last == vertices) {
    std::size_t v = queue.front();
    queue.pop_front();
    for (auto [e, end] = boost::out_edges(v, c); e != end; ++e) {
      std::size_t w = boost::target(*e, c);
      if (component[w] != component[start]) continue;
      if (w == start) {
        last = v;
        break;
      }
      if (parent[w] == vertices) {
        parent[w] = v;
        queue.push_back(w);
      }
    }
  }
  std::vector<std::size_t> path;
  for (std::size_t v = last; v != start; v = parent[v]) path.push_back(v);
  path.push_back(start);
  std::reverse(path.begin(), path.end());
  path.push_back(start);
  std::string text;
  for (std::size_t v : path)
    text += (text.empty() ? "" : " -> ") +
        (v < count ? describe_partition(g, partitions[v], v) : "'" + g.name(outside[v - count]) + "'");
  return Status::error("fusing would create a cycle: " + text);
}

}  // namespace graft
