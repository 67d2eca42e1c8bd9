// GraphListener: what hears about a graph's edits, as MLIR's rewriter listeners do. Every
// structure kept beside a graph listens through it: the undo journal of an open transaction,
// the order caches, a rewrite driver's candidate index (ListenerScope(g, index)). Node handles
// held elsewhere (Lua's, StampedId) need no notice: they carry the slot's generation.
//
// A callback runs in the middle of an edit: it may read the node it is told about (and, in
// node_changing, what is stored there before the change), but must not edit the graph or ask for
// order positions (order_index, order_key, comes_before), which are settled only when the edit
// returns. A rollback restores nodes wholesale and sends only graph_reordered: a listener that
// keeps per-node state rechecks it then. Assigning a whole graph to another sends nothing.
#pragma once

#include "graft/ir/ids.hpp"

namespace graft {

class Graph;

class GraphListener {
 public:
  GraphListener() = default;
  GraphListener(const GraphListener&) = default;
  GraphListener& operator=(const GraphListener&) = default;
  virtual ~GraphListener() = default;

  /// Before anything stored for node `n` changes: its fields, its links in the order, its use
  /// list (so also when `n` is a neighbour or an input of the node being edited), or, for a
  /// dead slot, before it is reused.
  virtual void node_changing(const Graph& /*g*/, NodeId /*n*/) {}
  /// After `n` was created and put in the order.
  virtual void node_inserted(const Graph& /*g*/, NodeId /*n*/) {}
  /// Before `n` is erased; it has no users and can still be read.
  virtual void node_erasing(const Graph& /*g*/, NodeId /*n*/) {}
  /// After `n` was moved to another place in the order.
  virtual void node_moved(const Graph& /*g*/, NodeId /*n*/) {}
  /// After the whole order was rebuilt (a sort, a rollback): positions say nothing any more.
  virtual void graph_reordered(const Graph& /*g*/) {}
};

}  // namespace graft
