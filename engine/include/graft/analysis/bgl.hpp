// Boost.Graph view of graft::Graph: vertices are node slots, edges are (input -> user, operand#).
//
// num_vertices() is the slot count, not the live count: BGL sizes its property maps with
// num_vertices and indexes them with vertex_index, so holes left by erased nodes must stay
// addressable (filtered_graph makes the same choice). vertices() visits live slots only.
// An edge names the consuming operand, so `mul(x, x)` has two parallel edges from x.
#pragma once

#include <boost/graph/graph_traits.hpp>
#include <boost/graph/properties.hpp>
#include <boost/iterator/iterator_facade.hpp>
#include <boost/property_map/property_map.hpp>

#include "graft/ir/graph.hpp"

namespace graft {

/// An operand edge: `target` reads `source` through its `operand`-th input.
struct BglEdge {
  NodeId source = kNoNode;
  NodeId target = kNoNode;
  std::uint32_t operand = 0;
  friend bool operator==(const BglEdge&, const BglEdge&) = default;
};

namespace detail {

class BglVertexIterator : public boost::iterator_facade<BglVertexIterator, NodeId, std::forward_iterator_tag, NodeId> {
 public:
  BglVertexIterator() = default;
  BglVertexIterator(const Graph* g, NodeId n) : g_(g), n_(n) { skip_dead(); }

 private:
  friend class boost::iterator_core_access;
  void skip_dead() {
    while (n_ < g_->num_slots() && !g_->is_alive(n_)) ++n_;
  }
  void increment() {
    ++n_;
    skip_dead();
  }
  bool equal(const BglVertexIterator& o) const { return n_ == o.n_; }
  NodeId dereference() const { return n_; }
  const Graph* g_ = nullptr;
  NodeId n_ = 0;
};

// Walks v's users, and within each user every operand that reads v.
class BglOutEdgeIterator
    : public boost::iterator_facade<BglOutEdgeIterator, BglEdge, std::forward_iterator_tag, BglEdge> {
 public:
  BglOutEdgeIterator() = default;
  BglOutEdgeIterator(const Graph* g, NodeId v, UserList::const_iterator user)
      : g_(g), v_(v), user_(user), end_(g->users(v).end()) {
    settle();
  }

 private:
  friend class boost::iterator_core_access;
  void settle() {
    while (user_ != end_) {
      const auto& inputs = g_->inputs(*user_);
      while (operand_ < inputs.size() && inputs[operand_] != v_) ++operand_;
      if (operand_ < inputs.size()) return;
      ++user_;
      operand_ = 0;
    }
  }
  void increment() {
    ++operand_;
    settle();
  }
  bool equal(const BglOutEdgeIterator& o) const { return user_ == o.user_ && operand_ == o.operand_; }
  BglEdge dereference() const { return {v_, *user_, static_cast<std::uint32_t>(operand_)}; }
  const Graph* g_ = nullptr;
  NodeId v_ = kNoNode;
  UserList::const_iterator user_{};
  UserList::const_iterator end_{};
  std::size_t operand_ = 0;
};

class BglInEdgeIterator
    : public boost::iterator_facade<BglInEdgeIterator, BglEdge, std::forward_iterator_tag, BglEdge> {
 public:
  BglInEdgeIterator() = default;
  BglInEdgeIterator(const Graph* g, NodeId v, std::size_t operand) : g_(g), v_(v), operand_(operand) {}

 private:
  friend class boost::iterator_core_access;
  void increment() { ++operand_; }
  bool equal(const BglInEdgeIterator& o) const { return operand_ == o.operand_; }
  BglEdge dereference() const { return {g_->inputs(v_)[operand_], v_, static_cast<std::uint32_t>(operand_)}; }
  const Graph* g_ = nullptr;
  NodeId v_ = kNoNode;
  std::size_t operand_ = 0;
};

}  // namespace detail

// --- the BGL free functions, found by argument-dependent lookup -------------------------------
inline std::pair<detail::BglVertexIterator, detail::BglVertexIterator> vertices(const Graph& g) {
  return {detail::BglVertexIterator(&g, 0), detail::BglVertexIterator(&g, static_cast<NodeId>(g.num_slots()))};
}
inline std::size_t num_vertices(const Graph& g) { return g.num_slots(); }
inline std::pair<detail::BglOutEdgeIterator, detail::BglOutEdgeIterator> out_edges(NodeId v, const Graph& g) {
  return {detail::BglOutEdgeIterator(&g, v, g.users(v).begin()), detail::BglOutEdgeIterator(&g, v, g.users(v).end())};
}
inline std::size_t out_degree(NodeId v, const Graph& g) {
  std::size_t d = 0;
  for (NodeId u : g.users(v))
    for (NodeId i : g.inputs(u)) d += i == v;
  return d;
}
inline std::pair<detail::BglInEdgeIterator, detail::BglInEdgeIterator> in_edges(NodeId v, const Graph& g) {
  return {detail::BglInEdgeIterator(&g, v, 0), detail::BglInEdgeIterator(&g, v, g.inputs(v).size())};
}
inline std::size_t in_degree(NodeId v, const Graph& g) { return g.inputs(v).size(); }
inline std::size_t degree(NodeId v, const Graph& g) { return in_degree(v, g) + out_degree(v, g); }
inline NodeId source(const BglEdge& e, const Graph&) { return e.source; }
inline NodeId target(const BglEdge& e, const Graph&) { return e.target; }

inline boost::typed_identity_property_map<NodeId> get(boost::vertex_index_t, const Graph&) { return {}; }

}  // namespace graft

namespace boost {

template <>
struct graph_traits<graft::Graph> {
  using vertex_descriptor = graft::NodeId;
  using edge_descriptor = graft::BglEdge;
  using directed_category = bidirectional_tag;
  using edge_parallel_category = allow_parallel_edge_tag;
  struct traversal_category : virtual vertex_list_graph_tag, virtual bidirectional_graph_tag {};
  using vertex_iterator = graft::detail::BglVertexIterator;
  using out_edge_iterator = graft::detail::BglOutEdgeIterator;
  using in_edge_iterator = graft::detail::BglInEdgeIterator;
  using adjacency_iterator = void;
  using edge_iterator = void;
  using vertices_size_type = std::size_t;
  using edges_size_type = std::size_t;
  using degree_size_type = std::size_t;
  static vertex_descriptor null_vertex() { return graft::kNoNode; }
};

template <>
struct property_map<graft::Graph, vertex_index_t> {
  using type = typed_identity_property_map<graft::NodeId>;
  using const_type = type;
};

}  // namespace boost
