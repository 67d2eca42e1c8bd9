// Transaction: the RAII way to make a group of edits all-or-nothing.
#pragma once

#include "graft/ir/graph.hpp"
#include "graft/ir/graph_diff.hpp"
#include "graft/ir/graph_module.hpp"
#include "graft/ir/module_table.hpp"

namespace graft {

/// Opens a transaction on `g` and, when given, its module table, nested in any already open
/// (the journals save each slot and module before its first change, so rollback is O(what was
/// touched)). Ends with commit() or rollback(); a transaction destroyed while still open rolls
/// back, so an early return or an exception leaves the graph and its modules as they were.
class Transaction {
 public:
  explicit Transaction(Graph& g, ModuleTable* modules = nullptr) : g_(&g), modules_(modules) {
    g.begin_nested_transaction();
    if (modules_ != nullptr) modules_->begin_nested_transaction();
  }
  explicit Transaction(GraphModule& gm) : Transaction(gm.graph, &gm.modules) {}
  ~Transaction() {
    if (g_ != nullptr) rollback();
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  /// Keeps the edits (an enclosing transaction still covers them).
  void commit() {
    g_->commit_transaction();
    if (modules_ != nullptr) modules_->commit_transaction();
    g_ = nullptr;
  }
  /// Undoes every edit since the transaction began.
  void rollback() {
    g_->rollback_transaction();
    if (modules_ != nullptr) modules_->rollback_transaction();
    g_ = nullptr;
  }
  /// What the transaction changed so far (GraphDiff's definitions).
  GraphDiff diff() const { return g_->transaction_diff(); }

 private:
  Graph* g_;
  ModuleTable* modules_;
};

}  // namespace graft
