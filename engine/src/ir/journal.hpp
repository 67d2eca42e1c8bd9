// Graph::Journal: what an open transaction saved (private to the IR's sources). It listens to
// the graph's edits like any GraphListener; the innermost open journal hears them and records for
// every enclosing one too.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graft/ir/graph.hpp"

namespace graft {

struct Graph::Journal final : GraphListener {
  std::size_t slot_count = 0;  ///< slots at begin; later slots are new and simply dropped
  NodeId head = kNoNode;
  NodeId tail = kNoNode;
  std::size_t live_count = 0;
  std::vector<NodeId> free_slots;
  std::size_t held_slots = 0;  ///< held_slots_.size() at begin: later ones were erased since
  InsertPoint insert;
  std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> name_counters;
  std::size_t retired_names = 0;  ///< names retired before begin
  std::vector<std::pair<NodeId, NodeData>> saved;  ///< each slot's contents at its first change
  /// Per `saved` record: this journal and the enclosing ones it stands for. The first change of
  /// a slot inside nested transactions is copied once, into the innermost journal, for every
  /// enclosing one that had not saved it either; a commit hands the record outwards, a rollback
  /// clears their marks (a copy per level doubled a pass's undo memory).
  std::vector<std::uint32_t> saved_depth;
  /// Slots erased without a saved copy: the tombstone keeps its contents until the outermost
  /// transaction ends (slots are not reused before), so only the links need saving. A slot may
  /// appear more than once, and in `saved` too, once a rollback inside brought it back as it
  /// was: every record of a slot holds its state at begin.
  struct KeptErase {
    NodeId id;
    NodeId prev;
    NodeId next;
    std::uint32_t depth;  ///< this journal and the enclosing ones that kept the slot in the same erase
  };
  std::vector<KeptErase> kept;
  std::vector<bool> touched;  ///< indexed by slot, for slots < slot_count
  bool order_changed = false;  ///< a move() or a whole-graph reorder happened
  std::vector<NodeId> order_at_begin;  ///< filled at the first order change
  std::unique_ptr<Journal> outer;  ///< the enclosing transaction, when nested
  /// The last node_erasing: some journal kept the slot's links, so the tombstone must keep its
  /// contents until the outermost transaction ends.
  bool last_erase_kept = false;

  /// Saves slot `n` once for every journal of the chain that has not saved it yet.
  void node_changing(const Graph& g, NodeId n) override;
  /// Journals that have not saved `n` note its links instead of copying its contents.
  void node_erasing(const Graph& g, NodeId n) override;
  void node_moved(const Graph& g, NodeId /*n*/) override { order_changing(g); }
  void graph_reordered(const Graph& g) override { order_changing(g); }

 private:
  /// Every journal of the chain keeps the order it began with (once).
  void order_changing(const Graph& g);
  /// `inner`: the journals inside this one, nearest first (their records may stand for it).
  void keep_order_at_begin(const Graph& g, const std::vector<const Journal*>& inner);
};

}  // namespace graft
