// Pass reports count what changed by comparing the graph before and after the pass, rather
// than instrumenting every edit: it cannot miss an edit, and it costs one linear walk.
#include "graft/ir/graph_diff.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "graft/ir/graph.hpp"
#include "journal.hpp"

namespace graft {
namespace {

/// Structural equality where node references are equal when `same_node(a, b)` says so.
template <class SameNode>
bool same_argument(const Argument& a, const Argument& b, const SameNode& same_node) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case ArgKind::Node: return same_node(a.node_id(), b.node_id());
    case ArgKind::List:
    case ArgKind::Tuple:
    case ArgKind::Dict:
    case ArgKind::Slice: {
      const auto& x = *a.items();
      const auto& y = *b.items();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (!same_argument(x[i], y[i], same_node)) return false;
      return true;
    }
    default: return a == b;
  }
}

template <class SameNode>
bool same_node_contents(const Graph& g1, NodeId a, const Graph& g2, NodeId b, const SameNode& same_node) {
  if (g1.op(a) != g2.op(b) || g1.name(a) != g2.name(b) || g1.target(a) != g2.target(b)) return false;
  if (!(g1.meta(a) == g2.meta(b))) return false;
  const auto& args1 = g1.args(a);
  const auto& args2 = g2.args(b);
  if (args1.size() != args2.size()) return false;
  for (std::size_t i = 0; i < args1.size(); ++i)
    if (!same_argument(args1[i], args2[i], same_node)) return false;
  const auto& kw1 = g1.kwargs(a);
  const auto& kw2 = g2.kwargs(b);
  if (kw1.size() != kw2.size()) return false;
  for (std::size_t i = 0; i < kw1.size(); ++i)
    if (kw1[i].first != kw2[i].first || !same_argument(kw1[i].second, kw2[i].second, same_node)) return false;
  return true;
}

/// Marks as moved the `survivors` (in their new order) outside the longest run that kept its
/// old relative order: a longest increasing subsequence of `old_position`, O(n log n). One node
/// moved counts once, not as a change of its neighbours too.
void mark_moved(const std::vector<std::uint32_t>& old_position, const std::vector<NodeId>& survivors,
                std::vector<bool>& moved) {
  std::vector<std::uint32_t> tails;  // smallest old position ending a run of length i+1
  std::vector<std::size_t> tail_index, parent(survivors.size(), SIZE_MAX);
  for (std::size_t i = 0; i < survivors.size(); ++i) {
    const std::uint32_t p = old_position[survivors[i]];
    const auto it = std::lower_bound(tails.begin(), tails.end(), p);
    const std::size_t len = static_cast<std::size_t>(it - tails.begin());
    if (it == tails.end()) {
      tails.push_back(p);
      tail_index.push_back(i);
    } else {
      *it = p;
      tail_index[len] = i;
    }
    if (len > 0) parent[i] = tail_index[len - 1];
  }
  for (NodeId n : survivors) moved[n] = true;
  for (std::size_t i = tail_index.empty() ? SIZE_MAX : tail_index.back(); i != SIZE_MAX; i = parent[i])
    moved[survivors[i]] = false;
}

}  // namespace

GraphDiff diff_in_place(const Graph& before, const Graph& after) {
  GraphDiff d;
  auto same_slot = [&](NodeId n) {
    return n < before.num_slots() && before.is_alive(n) && after.is_alive(n) &&
        before.generation(n) == after.generation(n);
  };
  // Moved nodes: the survivors, in their new order, that fall outside the longest run keeping
  // their old relative order (a longest increasing subsequence of old positions). One node moved
  // counts once, not as a change of its neighbours too.
  std::vector<std::uint32_t> old_position(before.num_slots(), 0);
  std::uint32_t position = 0;
  for (NodeId n : before.nodes()) old_position[n] = position++;
  std::vector<NodeId> survivors;
  for (NodeId n : after.nodes())
    if (same_slot(n)) survivors.push_back(n);
  std::vector<bool> moved(after.num_slots(), false);
  mark_moved(old_position, survivors, moved);
  for (NodeId n = 0; n < after.num_slots(); ++n) {
    if (!after.is_alive(n)) continue;
    if (!same_slot(n)) {
      ++d.added;
      continue;
    }
    if (moved[n] || !same_node_contents(before, n, after, n, [](NodeId x, NodeId y) { return x == y; })) ++d.changed;
  }
  for (NodeId n = 0; n < before.num_slots(); ++n)
    if (before.is_alive(n) && !same_slot(n)) ++d.removed;
  return d;
}

GraphDiff diff_by_name(const Graph& before, const Graph& after) {
  GraphDiff d;
  auto same_name = [&](NodeId x, NodeId y) { return before.name(x) == after.name(y); };
  for (NodeId n : after.nodes()) {
    const NodeId old = before.find(after.name(n));
    if (old == kNoNode) {
      ++d.added;
    } else if (!same_node_contents(before, old, after, n, same_name)) {
      ++d.changed;
    }
  }
  for (NodeId n : before.nodes())
    if (after.find(before.name(n)) == kNoNode) ++d.removed;
  return d;
}

GraphDiff Graph::transaction_diff() const {
  GraphDiff d;
  const Journal* j = journal_.p.get();
  if (j == nullptr) return d;
  auto same = [](NodeId x, NodeId y) { return x == y; };
  // Slots that did not exist at begin: every live one is new.
  for (NodeId n = static_cast<NodeId>(j->slot_count); n < slots_.size(); ++n)
    if (slots_[n].alive) ++d.added;
  std::vector<bool> moved(j->slot_count, false);
  if (j->order_changed) {
    // Moves or a whole reorder: the moved nodes are the survivors outside the longest run that
    // kept its old relative order, as diff_in_place counts them (a move back is no move).
    std::vector<std::uint32_t> old_position(j->slot_count, 0);
    std::vector<bool> was_listed(j->slot_count, false);
    std::uint32_t position = 0;
    for (NodeId n : j->order_at_begin) {
      old_position[n] = position++;
      was_listed[n] = true;
    }
    std::vector<const NodeData*> saved(j->slot_count, nullptr);
    for (const auto& [n, old] : j->saved) saved[n] = &old;
    std::vector<NodeId> survivors;  // nodes of the old order still here (a reused slot is not)
    for (NodeId n : nodes())
      if (n < j->slot_count && was_listed[n] && (saved[n] == nullptr || saved[n]->generation == slots_[n].generation))
        survivors.push_back(n);
    mark_moved(old_position, survivors, moved);
  }
  // A slot is saved at most once; it may also be kept, several times when rollbacks inside
  // brought it back, and every record holds its state at begin.
  std::vector<bool> seen(j->slot_count, false);
  for (const auto& [n, old] : j->saved) {
    seen[n] = true;
    const NodeData& now = slots_[n];
    const bool same_node = old.alive && now.alive && old.generation == now.generation;
    if (old.alive && !same_node) ++d.removed;
    if (now.alive && !same_node) ++d.added;
    if (!same_node) continue;
    // Compare the saved contents with the current ones.
    bool changed = moved[n] || old.op != now.op || old.name != now.name || old.target != now.target ||
        !(old.meta == now.meta) || old.args.size() != now.args.size() || old.kwargs.size() != now.kwargs.size();
    for (std::size_t i = 0; !changed && i < old.args.size(); ++i)
      changed = !same_argument(old.args[i], now.args[i], same);
    for (std::size_t i = 0; !changed && i < old.kwargs.size(); ++i)
      changed = old.kwargs[i].first != now.kwargs[i].first ||
          !same_argument(old.kwargs[i].second, now.kwargs[i].second, same);
    if (changed) ++d.changed;
  }
  for (const Journal::KeptErase& k : j->kept) {
    if (seen[k.id]) continue;
    seen[k.id] = true;
    if (!slots_[k.id].alive) ++d.removed;
  }
  return d;  // (a move or reorder touches every node it relinks, so `saved` covers moved nodes)
}

}  // namespace graft
