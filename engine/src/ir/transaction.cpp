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
  j->touched.assign(slots_.size(), false);
  journal_.p = std::move(j);
}

void Graph::record(NodeId n) {
  // Every enclosing transaction that has not saved this slot yet needs its state now: nobody
  // changed it since they began.
  for (Journal* j = journal_.p.get(); j != nullptr; j = j->outer.get()) {
    if (n >= j->slot_count || j->touched[n]) continue;
    j->touched[n] = true;
    j->saved.emplace_back(n, slots_[n]);
  }
}

void Graph::note_moved(NodeId) { note_reordered(); }

void Graph::note_reordered() {
  for (Journal* j = journal_.p.get(); j != nullptr; j = j->outer.get()) note_reordered(j);
}

void Graph::note_reordered(Journal* jp) {
  Journal* j = jp;
  if (j->order_changed) return;
  // The order as it was at begin, rebuilt from the saved links (the list is about to be
  // relinked). Untouched nodes kept their links, so walking saved-or-current links from the
  // old head reproduces the old list. Once per transaction: O(n).
  j->order_changed = true;
  std::vector<const NodeData*> original(slots_.size(), nullptr);
  for (const auto& [id, data] : j->saved) original[id] = &data;
  for (NodeId n = j->head; n != kNoNode;) {
    j->order_at_begin.push_back(n);
    const NodeData& d = original[n] ? *original[n] : slots_[n];
    n = d.next;
  }
}

void Graph::commit_transaction() {
  if (!journal_.p) return;
  std::unique_ptr<Journal> j = std::move(journal_.p);
  journal_.p = std::move(j->outer);
  if (journal_.p) {  // the outer transaction now covers these edits
    auto& outer = journal_.p->retired;
    outer.insert(outer.end(), std::make_move_iterator(j->retired.begin()), std::make_move_iterator(j->retired.end()));
  }
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
  slots_.resize(j->slot_count);
  for (auto& [id, data] : j->saved) {
    slots_[id] = std::move(data);
    if (slots_[id].alive) by_name_.insert(slots_[id].name, id);
  }
  head_ = j->head;
  tail_ = j->tail;
  live_count_ = j->live_count;
  free_slots_ = std::move(j->free_slots);
  held_slots_.resize(j->held_slots);  // the nodes erased since begin are back
  insert_ = j->insert;
  name_counters_ = std::move(j->name_counters);
  for (const std::string& name : j->retired) retired_names_.erase(name);
  reorder_all();
}

}  // namespace graft
