// Graph transactions: an undo journal of the slots an edit is about to change. Passes run
// inside one, so a failing pass costs what it touched to undo, not a copy of the graph.
#include "journal.hpp"

namespace graft {

Graph::JournalHandle::JournalHandle() = default;
Graph::JournalHandle::JournalHandle(const JournalHandle&) {}  // a copy has no open transaction
Graph::JournalHandle::~JournalHandle() = default;
Graph::JournalHandle::JournalHandle(JournalHandle&&) noexcept = default;
Graph::JournalHandle& Graph::JournalHandle::operator=(JournalHandle&&) noexcept = default;
Graph::JournalHandle& Graph::JournalHandle::operator=(const JournalHandle&) {
  p.reset();  // assigning a graph ends any transaction the target had open
  return *this;
}

Status Graph::begin_transaction() {
  if (journal_.p) return Status::error("a transaction is already open on this graph");
  begin_nested_transaction();
  return Status::ok();
}

void Graph::begin_nested_transaction() {
  auto j = std::make_unique<Journal>();
  j->outer = std::move(journal_.p);
  j->slot_count = slots_.size();
  j->head = head_;
  j->tail = tail_;
  j->live_count = live_count_;
  j->free_slots = free_slots_;
  j->held_slots = held_slots_.size();
  j->insert = insert_;
  j->name_counters = name_counters_;
  j->retired_names = retired_names_.size();
  j->touched.assign(slots_.size(), false);
  journal_.p = std::move(j);
}

void Graph::Journal::node_changing(const Graph& g, NodeId n) {
  // Every enclosing transaction that has not saved this slot yet needs its state now: nobody
  // changed it since they began. Those are the innermost ones (one that saved it made every
  // enclosing one save it too), so one copy, here, stands for all of them.
  std::uint32_t depth = 0;
  for (Journal* j = this; j != nullptr && n < j->slot_count && !j->touched[n]; j = j->outer.get()) {
    j->touched[n] = true;
    ++depth;
  }
  if (depth == 0) return;
  saved.emplace_back(n, g.node(n));
  saved_depth.push_back(depth);
}

void Graph::Journal::node_erasing(const Graph& g, NodeId n) {
  // The journals that have not saved `n` are the innermost ones (one that saved it made every
  // enclosing one save it too), so they are counted from the inside out.
  std::uint32_t depth = 0;
  for (Journal* j = this; j != nullptr && n < j->slot_count && !j->touched[n]; j = j->outer.get()) ++depth;
  std::uint32_t left = depth;
  for (Journal* j = this; left > 0; j = j->outer.get(), --left) {
    j->touched[n] = true;
    j->kept.push_back({n, g.prev(n), g.next(n), left});
  }
  last_erase_kept = depth > 0;
}

void Graph::Journal::order_changing(const Graph& g) {
  std::vector<const Journal*> inner;
  for (Journal* j = this; j != nullptr; j = j->outer.get()) {
    j->keep_order_at_begin(g, inner);
    inner.insert(inner.begin(), j);
  }
}

void Graph::Journal::keep_order_at_begin(const Graph& g, const std::vector<const Journal*>& inner) {
  if (order_changed) return;
  // The order as it was at begin, rebuilt from the saved links: every slot whose links changed
  // was saved (or kept) before the change, and the others kept theirs, so walking saved-or-current
  // links from the old head reproduces the old list. Once per transaction: O(n).
  order_changed = true;
  std::vector<NodeId> next(g.num_slots());
  for (NodeId n = 0; n < g.num_slots(); ++n) next[n] = g.node(n).next;
  for (const KeptErase& k : kept) next[k.id] = k.next;
  for (const auto& [id, data] : saved) next[id] = data.next;
  // inner[k] is k + 1 levels inside this journal: its records of depth above that stand for it.
  for (std::size_t k = 0; k < inner.size(); ++k)
    for (std::size_t r = 0; r < inner[k]->saved.size(); ++r)
      if (inner[k]->saved_depth[r] > k + 1) next[inner[k]->saved[r].first] = inner[k]->saved[r].second.next;
  for (NodeId n = head; n != kNoNode; n = next[n]) order_at_begin.push_back(n);
}

void Graph::commit_transaction() {
  if (!journal_.p) return;
  std::unique_ptr<Journal> j = std::move(journal_.p);
  journal_.p = std::move(j->outer);
  if (journal_.p) {
    // The outer transaction now covers these edits: the records that stand for it too are its.
    Journal& outer = *journal_.p;
    for (std::size_t r = 0; r < j->saved.size(); ++r)
      if (j->saved_depth[r] > 1) {
        outer.saved.push_back(std::move(j->saved[r]));
        outer.saved_depth.push_back(j->saved_depth[r] - 1);
      }
    // Slots this one erased that the outer one created are fresh to it: their tombstones need
    // keep nothing for a rollback of it.
    const std::size_t outer_slots = journal_.p->slot_count;
    std::size_t kept = j->held_slots;
    for (std::size_t i = j->held_slots; i < held_slots_.size(); ++i) {
      const NodeId n = held_slots_[i];
      if (n < outer_slots) {
        held_slots_[kept++] = n;
        continue;
      }
      slots_[n] = NodeData{.generation = slots_[n].generation};
      fresh_free_.push_back(n);
    }
    held_slots_.resize(kept);
    return;
  }
  // No rollback can come any more: free what the tombstones of erased nodes kept for one.
  for (std::size_t i = j->held_slots; i < held_slots_.size(); ++i) {
    NodeData& d = slots_[held_slots_[i]];
    d = NodeData{.generation = d.generation};
  }
  held_slots_.insert(held_slots_.end(), fresh_free_.begin(), fresh_free_.end());
  fresh_free_.clear();
}

void Graph::rollback_transaction() {
  if (!journal_.p) return;
  std::unique_ptr<Journal> j = std::move(journal_.p);
  journal_.p = std::move(j->outer);
  // Names: forget every current name of a touched or new slot, then restore the saved ones.
  for (NodeId n = static_cast<NodeId>(j->slot_count); n < slots_.size(); ++n)
    if (slots_[n].alive) by_name_.erase(slots_[n].name, n);
  for (const auto& [id, data] : j->saved)
    if (slots_[id].alive) by_name_.erase(slots_[id].name, id);
  for (const Journal::KeptErase& k : j->kept)  // alive again if an inner rollback restored it
    if (slots_[k.id].alive) by_name_.erase(slots_[k.id].name, k.id);
  slots_.resize(j->slot_count);
  for (const Journal::KeptErase& k : j->kept) {
    NodeData& d = slots_[k.id];
    d.alive = true;
    d.prev = k.prev;
    d.next = k.next;
    d.inputs = collect_inputs(d);
    // Back as it was when the enclosing journals that kept it too began: they need nothing more.
    Journal* outer = journal_.p.get();
    for (std::uint32_t left = k.depth; left > 1 && outer != nullptr; --left, outer = outer->outer.get())
      outer->touched[k.id] = false;
  }
  for (std::size_t r = 0; r < j->saved.size(); ++r) {
    // Back as it was when the enclosing journals this record stood for began: they need nothing.
    Journal* outer = journal_.p.get();
    for (std::uint32_t left = j->saved_depth[r]; left > 1 && outer != nullptr; --left, outer = outer->outer.get())
      outer->touched[j->saved[r].first] = false;
  }
  for (auto& [id, data] : j->saved) slots_[id] = std::move(data);
  for (const Journal::KeptErase& k : j->kept)
    if (slots_[k.id].alive) (void)by_name_.insert_unique(slots_[k.id].name, k.id, name_of());
  for (const auto& [id, data] : j->saved)
    if (slots_[id].alive) (void)by_name_.insert_unique(slots_[id].name, id, name_of());
  // Names back from before begin may predate the ceiling (built since).
  for (const Journal::KeptErase& k : j->kept) suffix_ceiling_.note(slots_[k.id].name);
  for (const auto& [id, data] : j->saved) suffix_ceiling_.note(slots_[id].name);
  head_ = j->head;
  tail_ = j->tail;
  live_count_ = j->live_count;
  free_slots_ = std::move(j->free_slots);
  held_slots_.resize(j->held_slots);  // the nodes erased since begin are back
  // Slots past slot_count are gone; the rest are an outer transaction's, erased before begin.
  std::erase_if(fresh_free_, [&](NodeId n) { return n >= j->slot_count; });
  insert_ = j->insert;
  name_counters_ = std::move(j->name_counters);
  retired_names_.truncate(j->retired_names);
  // The graph is as it was at this journal's begin; enclosing journals' records still hold.
  order_cache_.graph_reordered(*this);
  for (GraphListener* l : listeners_.list) l->graph_reordered(*this);
}

}  // namespace graft
