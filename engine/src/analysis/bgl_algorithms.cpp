// Topological order and strong components through Boost.Graph on the arena adaptor.
#include <algorithm>
#include <boost/graph/strong_components.hpp>
#include <boost/graph/topological_sort.hpp>
#include <iterator>
#include <map>

#include "graft/analysis/analysis.hpp"
#include "graft/analysis/bgl.hpp"

namespace graft {

Result<std::vector<NodeId>> bgl_topological_order(const Graph& g) {
  std::vector<NodeId> reversed;
  reversed.reserve(g.size());
  try {
    boost::topological_sort(g, std::back_inserter(reversed));
  } catch (const boost::not_a_dag&) {
    Components c = strongly_connected_components(g);
    std::string name = c.cycles.empty() ? std::string("?") : g.name(c.cycles.front().front());
    return Status::node_error(name, "is on a cycle; the graph has no topological order");
  }
  std::reverse(reversed.begin(), reversed.end());
  return reversed;
}

Components strongly_connected_components(const Graph& g) {
  Components out;
  out.component.assign(g.num_slots(), kNoNode);
  auto index = get(boost::vertex_index, g);
  auto comp_map = boost::make_iterator_property_map(out.component.begin(), index);
  out.count = boost::strong_components(g, comp_map);

  std::map<std::uint32_t, std::vector<NodeId>> members;  // ordered: deterministic output
  for (NodeId n : g.nodes()) members[out.component[n]].push_back(n);
  std::vector<std::uint32_t> pos(g.num_slots(), 0);  // local: g's order cache is not thread-safe
  std::uint32_t next = 0;
  for (NodeId n : g.nodes()) pos[n] = next++;
  for (auto& [id, nodes] : members) {
    bool self_loop = nodes.size() == 1 &&
        std::find(g.inputs(nodes[0]).begin(), g.inputs(nodes[0]).end(), nodes[0]) != g.inputs(nodes[0]).end();
    if (nodes.size() < 2 && !self_loop) continue;
    std::sort(nodes.begin(), nodes.end(), [&](NodeId a, NodeId b) { return pos[a] < pos[b]; });
    out.cycles.push_back(std::move(nodes));
  }
  std::sort(out.cycles.begin(), out.cycles.end(),
            [&](const auto& a, const auto& b) { return pos[a.front()] < pos[b.front()]; });
  return out;
}

}  // namespace graft
