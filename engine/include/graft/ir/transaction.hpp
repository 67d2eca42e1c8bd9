// Transaction: the RAII way to make a group of edits all-or-nothing.
#pragma once

#include "graft/ir/graph.hpp"
#include "graft/ir/graph_diff.hpp"

namespace graft {

/// Opens a transaction on `g`, nested in any already open (the journal saves each slot before
/// its first change, so rollback is O(nodes touched)). Ends with commit() or rollback(); a
/// transaction destroyed while still open rolls back, so an early return or an exception leaves
/// the graph as it was.
class Transaction {
 public:
  explicit Transaction(Graph& g) : g_(&g) { g.begin_nested_transaction(); }
  ~Transaction() {
    if (g_ != nullptr) g_->rollback_transaction();
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  /// Keeps the edits (an enclosing transaction still covers them).
  void commit() {
    g_->commit_transaction();
    g_ = nullptr;
  }
  /// Undoes every edit since the transaction began.
  void rollback() {
    g_->rollback_transaction();
    g_ = nullptr;
  }
  /// What the transaction changed so far (GraphDiff's definitions).
  GraphDiff diff() const { return g_->transaction_diff(); }

 private:
  Graph* g_;
};

}  // namespace graft
