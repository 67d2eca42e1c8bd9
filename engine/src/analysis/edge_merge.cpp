// merge_along_edges. The cycle check of a merge searches forward from the union's outside
// users, but only up to a bound past which no path can come back: the union's last position,
// pushed further while some group starts before it and ends after it (a group counts as one
// node, so it can lead back to its earliest member). A Fenwick tree of each group's last
// position, keyed by its first, answers that in O(log n); outside users are kept per group.
#include "edge_merge.hpp"

#include <algorithm>

namespace graft::detail {
namespace {

constexpr std::uint32_t kNone = kNoNode;

/// Prefix maximum over positions, values only growing.
class PrefixMax {
 public:
  explicit PrefixMax(std::size_t n) : tree_(n + 1, 0) {}
  void raise(std::uint32_t at, std::uint32_t value) {
    for (std::size_t i = at + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] = std::max(tree_[i], value);
  }
  std::uint32_t up_to(std::uint32_t at) const {  // max over positions <= at
    std::uint32_t best = 0;
    for (std::size_t i = std::min<std::size_t>(at + 1, tree_.size() - 1); i > 0; i -= i & (~i + 1))
      best = std::max(best, tree_[i]);
    return best;
  }

 private:
  std::vector<std::uint32_t> tree_;
};

struct Group {
  std::vector<NodeId> members;
  std::vector<NodeId> outside;  // users of members outside the group (may hold stale entries)
  std::uint32_t first = 0, last = 0;  // positions of the earliest and the latest member
};

class EdgeMerger {
 public:
  EdgeMerger(const Graph& g, const std::vector<NodeId>& order, const std::vector<std::uint8_t>& candidate)
      : g_(g),
        order_(order),
        candidate_(candidate),
        pos_(g.num_slots(), kNone),
        group_(g.num_slots(), kNone),
        stamp_(g.num_slots(), 0),
        bounds_(order.size()) {
    for (std::uint32_t i = 0; i < order.size(); ++i) pos_[order[i]] = i;
  }

  std::vector<std::uint32_t> run() {
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      const NodeId n = *it;
      if (!candidate_[n]) continue;
      std::uint32_t current = static_cast<std::uint32_t>(groups_.size());
      groups_.push_back({{n}, {g_.users(n).begin(), g_.users(n).end()}, pos_[n], pos_[n]});
      group_stamp_.push_back(0);
      group_[n] = current;
      bounds_.raise(pos_[n], pos_[n]);
      for (NodeId u : g_.users(n)) {
        const std::uint32_t other = group_[u];
        if (other == kNone || other == current || union_has_cycle(current, other)) continue;
        current = merge(current, other);
      }
    }
    return std::move(group_);
  }

 private:
  std::uint32_t merge(std::uint32_t a, std::uint32_t b) {
    const std::uint32_t into = groups_[a].members.size() < groups_[b].members.size() ? b : a;
    const std::uint32_t from = into == a ? b : a;
    Group& to = groups_[into];
    Group& gone = groups_[from];
    for (NodeId m : gone.members) group_[m] = into;
    to.members.insert(to.members.end(), gone.members.begin(), gone.members.end());
    to.outside.insert(to.outside.end(), gone.outside.begin(), gone.outside.end());
    prune_outside(into);
    to.first = std::min(to.first, gone.first);
    to.last = std::max(to.last, gone.last);
    bounds_.raise(to.first, to.last);
    gone = Group{};
    return into;
  }

  void prune_outside(std::uint32_t grp) {
    auto& out = groups_[grp].outside;
    out.erase(std::remove_if(out.begin(), out.end(), [&](NodeId u) { return group_[u] == grp; }), out.end());
  }

  bool union_has_cycle(std::uint32_t a, std::uint32_t b) {
    ++epoch_;
    prune_outside(a);
    prune_outside(b);
    std::uint32_t bound = std::max(groups_[a].last, groups_[b].last);
    for (std::uint32_t further = bounds_.up_to(bound); further > bound; further = bounds_.up_to(bound)) bound = further;
    std::vector<NodeId>& stack = stack_;
    stack.clear();
    auto visit = [&](NodeId u) {
      if (pos_[u] > bound || stamp_[u] == epoch_) return false;
      stamp_[u] = epoch_;
      if (group_[u] == a || group_[u] == b) return true;
      stack.push_back(u);
      return false;
    };
    for (std::uint32_t grp : {a, b})
      for (NodeId u : groups_[grp].outside)
        if (group_[u] != a && group_[u] != b) visit(u);
    while (!stack.empty()) {
      const NodeId x = stack.back();
      stack.pop_back();
      const std::uint32_t grp = group_[x];
      if (grp == kNone) {
        for (NodeId u : g_.users(x))
          if (visit(u)) return true;
      } else if (group_stamp_[grp] != epoch_) {
        group_stamp_[grp] = epoch_;
        for (NodeId u : groups_[grp].outside)
          if (visit(u)) return true;
      }
    }
    return false;
  }

  const Graph& g_;
  const std::vector<NodeId>& order_;
  const std::vector<std::uint8_t>& candidate_;
  std::vector<std::uint32_t> pos_;
  std::vector<std::uint32_t> group_;
  std::vector<Group> groups_;
  std::vector<std::uint32_t> stamp_, group_stamp_;
  std::uint32_t epoch_ = 0;
  PrefixMax bounds_;
  std::vector<NodeId> stack_;
};

}  // namespace

std::vector<std::uint32_t> merge_along_edges(const Graph& g, const std::vector<NodeId>& order,
                                             const std::vector<std::uint8_t>& candidate) {
  return EdgeMerger(g, order, candidate).run();
}

}  // namespace graft::detail
