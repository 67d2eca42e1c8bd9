// Hand-written traversals against Boost.Graph doing the same work on the same graphs, for the
// traversals that stay hand-written (bench/README.md, "Where Boost.Graph is not used"):
//
// - fusion validity: fusion_cycle_through on every 2-node and 4-node window the matcher would
//   check, against depth_first_visit on the arena adaptor bounded by graph order (a colour map
//   cleared by epoch, so neither side costs O(graph) per call);
// - liveness: compute_liveness, against boost::topological_sort of the same graph (all that BGL
//   could contribute: the order; a graph's own order already is one).
//
// Both sides' answers are compared before any time is printed.
//
//   graft_traversal_bench [NODES ...]     (default 10000 100000 1000000)
#include <fmt/core.h>

#include <algorithm>
#include <boost/graph/depth_first_search.hpp>
#include <boost/graph/topological_sort.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <string>
#include <vector>

#include "best_of.hpp"
#include "graft/analysis/bgl.hpp"
#include "graft/ir/op_schema.hpp"
#include "graft/match/fusion_cycle.hpp"
#include "graft/passes/liveness.hpp"
#include "synthetic_graph.hpp"

namespace {

using namespace graft;

/// The best of `repeats` runs of `f`, in milliseconds.
template <class F>
double best_ms(int repeats, F&& f) {
  return 1000 * graft::bench::best_of(repeats, f);
}

/// A colour map for depth_first_visit that is white for every vertex not painted in the
/// current epoch: one allocation for the whole benchmark, cleared per call in O(1).
struct EpochColors {
  std::vector<std::uint32_t> stamp;
  std::vector<boost::default_color_type> color;
  std::uint32_t epoch = 0;
};
struct EpochColorMap {
  EpochColors* c;
};
}  // namespace

namespace boost {
template <>
struct property_traits<EpochColorMap> {
  using value_type = default_color_type;
  using reference = default_color_type;
  using key_type = graft::NodeId;
  using category = read_write_property_map_tag;
};
}  // namespace boost

namespace {

boost::default_color_type get(const EpochColorMap& m, NodeId v) {
  return m.c->stamp[v] == m.c->epoch ? m.c->color[v] : boost::white_color;
}
void put(const EpochColorMap& m, NodeId v, boost::default_color_type value) {
  m.c->stamp[v] = m.c->epoch;
  m.c->color[v] = value;
}

/// True if some path leaves `nodes` and comes back: the same question as fusion_cycle_through,
/// through Boost.Graph.
bool fusion_cycle_bgl(const Graph& g, const std::vector<NodeId>& nodes, EpochColors& colors,
                      std::vector<std::uint32_t>& inside_stamp) {
  if (nodes.size() < 2) return false;
  ++colors.epoch;
  std::uint64_t last = 0;
  for (NodeId n : nodes) {
    inside_stamp[n] = colors.epoch;
    last = std::max(last, g.order_key(n));
  }
  const std::uint32_t e = colors.epoch;
  bool found = false;
  struct Visitor : boost::default_dfs_visitor {
    const std::vector<std::uint32_t>* inside;
    std::uint32_t epoch;
    bool* found;
    void discover_vertex(NodeId v, const Graph& /*g*/) const {
      if ((*inside)[v] == epoch) *found = true;
    }
  } visitor;
  visitor.inside = &inside_stamp;
  visitor.epoch = e;
  visitor.found = &found;
  // Do not expand past the set's last position, nor once the answer is known, nor the set.
  auto stop = [&](NodeId v, const Graph& graph) { return found || inside_stamp[v] == e || graph.order_key(v) >= last; };
  const EpochColorMap color{&colors};
  for (NodeId n : nodes)
    for (NodeId u : g.users(n)) {
      if (found) return true;
      if (inside_stamp[u] == e || g.order_key(u) >= last || get(color, u) != boost::white_color) continue;
      boost::depth_first_visit(g, u, visitor, color, stop);
    }
  return found;
}

/// The sets the matcher would ask about: each call with its first call input, each run of four
/// consecutive calls, and calls two and eight apart (most of those leave and come back: cycles).
std::vector<std::vector<NodeId>> windows(const Graph& g) {
  std::vector<std::vector<NodeId>> out;
  std::vector<NodeId> calls;
  for (NodeId n : g.nodes())
    if (g.op(n) == OpKind::CallFunction) calls.push_back(n);
  for (NodeId n : calls)
    for (NodeId x : g.inputs(n))
      if (g.op(x) == OpKind::CallFunction) {
        out.push_back({x, n});
        break;
      }
  for (std::size_t i = 0; i + 4 <= calls.size(); i += 4) out.push_back({calls.begin() + i, calls.begin() + i + 4});
  for (std::size_t gap : {2, 8})
    for (std::size_t i = 0; i + gap < calls.size(); i += 3) out.push_back({calls[i], calls[i + gap]});
  return out;
}

bool run(const char* family, const GraphModule& gm) {
  const Graph& g = gm.graph;
  const std::vector<std::vector<NodeId>> sets = windows(g);
  EpochColors colors;
  colors.stamp.assign(g.num_slots(), 0);
  colors.color.assign(g.num_slots(), boost::white_color);
  std::vector<std::uint32_t> inside(g.num_slots(), 0);
  std::size_t cyclic = 0;
  for (const auto& s : sets) {
    const bool hand = fusion_cycle_through(g, s) != kNoNode;
    if (hand != fusion_cycle_bgl(g, s, colors, inside)) {
      fmt::print(stderr, "{}: the two fusion checks disagree on a set of {} nodes at '{}'\n", family, s.size(),
                 g.name(s.front()));
      return false;
    }
    cyclic += hand ? 1 : 0;
  }
  std::size_t sink = 0;
  const double hand_ms = best_ms(3, [&] {
    for (const auto& s : sets) sink += fusion_cycle_through(g, s) != kNoNode;
  });
  const double bgl_ms = best_ms(3, [&] {
    for (const auto& s : sets) sink += fusion_cycle_bgl(g, s, colors, inside);
  });

  Result<Liveness> live = compute_liveness(g, OpSchemaRegistry::builtin());
  if (!live) {
    fmt::print(stderr, "{}: liveness failed: {}\n", family, live.status().message());
    return false;
  }
  std::vector<NodeId> reversed;
  boost::topological_sort(g, std::back_inserter(reversed));
  if (reversed.size() != g.size()) {
    fmt::print(stderr, "{}: BGL's order has {} of {} nodes\n", family, reversed.size(), g.size());
    return false;
  }
  const double live_ms = best_ms(3, [&] { sink += compute_liveness(g, OpSchemaRegistry::builtin())->buffers.size(); });
  const double topo_ms = best_ms(3, [&] {
    reversed.clear();
    boost::topological_sort(g, std::back_inserter(reversed));
    sink += reversed.size();
  });
  const double per_set = 1e6 / static_cast<double>(sets.size());
  const double per_node = 1e6 / static_cast<double>(g.size());
  fmt::print(
      "{:<12} {:>9} nodes  fusion check ({} sets, {} cyclic): hand {:7.1f} ns/set, BGL {:7.1f} ns/set  |  "
      "liveness {:6.1f} ns/node, BGL topological_sort alone {:6.1f} ns/node{}\n",
      family, g.size(), sets.size(), cyclic, hand_ms * per_set, bgl_ms * per_set, live_ms * per_node,
      topo_ms * per_node, sink == 0 ? " " : "");
  return true;
}

}  // namespace

int main(int argc, char** argv) try {
  std::vector<std::size_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::strtoull(argv[i], nullptr, 10));
  if (sizes.empty()) sizes = {10'000, 100'000, 1'000'000};
  for (std::size_t n : sizes) {
    if (!run("transformer", bench::transformer_stack(n))) return 1;
    if (!run("skip-chain", bench::scattered_chain(n, 100))) return 1;
  }
  return 0;
} catch (const std::exception& e) {  // boost::not_a_dag, std::bad_alloc
  std::fputs(e.what(), stderr);
  std::fputs("\n", stderr);
  return 1;
}
