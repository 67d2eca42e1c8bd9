// propose_partitions: levels in one reverse sweep, then torch's post-processing.
#include "graft/analysis/partitioner.hpp"

#include "edge_merge.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace graft {
namespace {

constexpr std::uint32_t kNone = kNoNode;

bool is_call(OpKind op) { return op == OpKind::CallFunction || op == OpKind::CallMethod || op == OpKind::CallModule; }

bool is_getitem(const Graph& g, NodeId n) {
  return g.op(n) == OpKind::CallFunction && g.target(n) == "_operator.getitem";
}

class Partitioner {
 public:
  Partitioner(const Graph& g, const ModuleTable* modules, const OperatorSupport& support, const PartitionOptions& o)
      : g_(g), modules_(modules), support_(support), o_(o) {}

  Result<Partitioning> run() {
    order_ = g_.node_list();
    pos_.assign(g_.num_slots(), kNone);
    for (std::uint32_t i = 0; i < order_.size(); ++i) pos_[order_[i]] = i;
    if (Status s = decide_support(); !s) return s;
    if (!o_.skip_horizontal_fusion) follow_producers();
    compute_levels();
    group();
    reassign_getitems();
    collect();
    filter_small();
    if (o_.remove_bookend_non_compute_ops) remove_bookends();
    if (o_.max_partition_size > 0) split_large();
    return finish();
  }

 private:
  // --- support --------------------------------------------------------------------------------
  Status decide_support() {
    candidate_.assign(g_.num_slots(), 0);
    reason_.assign(g_.num_slots(), {});
    std::unordered_set<std::string_view> excluded;
    for (const std::string& name : o_.exclude_nodes) {
      if (g_.find(name) == kNoNode) return Status::error("exclude_nodes: the graph has no node named '" + name + "'");
      excluded.insert(name);
    }
    const bool by_target = support_.depends_only_on_target();
    std::unordered_map<std::uint64_t, SupportVerdict> memo;
    for (NodeId n : order_) {
      OpKind op = g_.op(n);
      if (!is_call(op)) continue;
      if (excluded.count(g_.name(n))) {
        reason_[n] = {n, LeftOutReason::Excluded, {}, kNoNode, 0};
        continue;
      }
      SupportVerdict v;
      if (by_target) {
        std::uint64_t key = (std::uint64_t(g_.target_symbol(n)) << 3) | std::uint64_t(op);
        auto it = memo.find(key);
        if (it == memo.end()) it = memo.emplace(key, support_.decide(g_, modules_, n)).first;
        v = it->second;
      } else {
        v = support_.decide(g_, modules_, n);
      }
      if (v.supported) candidate_[n] = 1;
      else reason_[n] = {n, LeftOutReason::Unsupported, std::move(v.rule), kNoNode, 0};
    }
    return Status::ok();
  }

  // A getitem goes where its producer goes. torch moves getitems after growing partitions;
  // with levels that would let a getitem that leaves raise its neighbours' levels and split a
  // partition for nothing, so it is decided up front (graph order: nested getitems follow).
  // Merging along edges (skip_horizontal_fusion) keeps torch's order, and its results.
  void follow_producers() {
    for (NodeId n : order_) {
      const UserList& users = g_.users(n);
      if (users.empty() || !std::all_of(users.begin(), users.end(), [&](NodeId u) { return is_getitem(g_, u); }))
        continue;
      for (NodeId u : users) {
        if (reason_[u].reason == LeftOutReason::Excluded && reason_[u].node != kNoNode) continue;
        candidate_[u] = candidate_[n];
        reason_[u] = candidate_[n] ? LeftOutNode{} : LeftOutNode{u, LeftOutReason::GetitemOfOutside, {}, kNoNode, 0};
      }
    }
  }

  // --- levels ---------------------------------------------------------------------------------
  // A candidate's level: the most unsupported nodes on a path from it to a candidate. A
  // non-candidate's value is the level a candidate using it must at least have. `via_` keeps,
  // for each candidate, the first non-candidate on the path that set its level.
  void compute_levels() {
    level_.assign(g_.num_slots(), 0);
    via_.assign(g_.num_slots(), kNoNode);
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      NodeId x = *it;
      const bool cx = candidate_[x];
      std::uint32_t best = 0;
      NodeId via = kNoNode;
      for (NodeId u : g_.users(x)) {
        std::uint32_t need = level_[u] + ((candidate_[u] && !cx) ? 1u : 0u);
        if (need > best) {
          best = need;
          via = candidate_[u] ? via_[u] : u;
        }
      }
      level_[x] = best;
      via_[x] = cx ? via : x;
    }
  }

  // Group candidates: one group per level, numbered from the end of the graph.
  void group() {
    group_.assign(g_.num_slots(), kNone);
    if (o_.skip_horizontal_fusion) {
      group_ = detail::merge_along_edges(g_, order_, candidate_);
      return;
    }
    for (NodeId n : order_)
      if (candidate_[n]) group_[n] = level_[n];
  }

  // A node whose users are all getitems hands them its group, in graph order so that nested
  // getitems follow their producer's new group.
  void reassign_getitems() {
    for (NodeId n : order_) {
      const UserList& users = g_.users(n);
      if (users.empty()) continue;
      bool all = std::all_of(users.begin(), users.end(), [&](NodeId u) { return is_getitem(g_, u); });
      if (!all) continue;
      for (NodeId u : users) {
        group_[u] = group_[n];
        if (group_[n] == kNone && candidate_[u]) reason_[u] = {u, LeftOutReason::GetitemOfOutside, {}, kNoNode, 0};
      }
    }
  }

  // Groups become partitions in the order of their numbers: the group grown first, nearest the
  // end of the graph, first (torch returns partitions by id).
  void collect() {
    std::vector<std::uint32_t> ids;
    for (NodeId n : order_)
      if (group_[n] != kNone) ids.push_back(group_[n]);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    std::unordered_map<std::uint32_t, std::uint32_t> index;
    for (std::uint32_t i = 0; i < ids.size(); ++i) index[ids[i]] = i;
    parts_.resize(ids.size());
    for (NodeId n : order_)
      if (group_[n] != kNone) parts_[index[group_[n]]].push_back(n);
  }

  // --- post-processing ------------------------------------------------------------------------
  bool is_non_compute(NodeId n) const {
    if (g_.op(n) != OpKind::CallFunction) return false;
    const std::string& t = g_.target(n);
    return t == "torch.ops.aten.view" || t == "_operator.getitem" ||
        std::find(o_.non_compute_ops.begin(), o_.non_compute_ops.end(), t) != o_.non_compute_ops.end();
  }

  std::size_t compute_count(const std::vector<NodeId>& part, bool doubled) const {
    std::size_t count = 0;
    for (NodeId n : part) {
      if (g_.op(n) != OpKind::CallFunction) continue;  // torch counts call_function nodes only
      if (!is_non_compute(n)) ++count;
      if (doubled &&
          std::find(o_.allowed_single_node_partition_ops.begin(), o_.allowed_single_node_partition_ops.end(),
                    g_.target(n)) != o_.allowed_single_node_partition_ops.end())
        ++count;
    }
    return count;
  }

  void drop(std::vector<NodeId>& part, LeftOutReason why, std::size_t count) {
    for (NodeId n : part) reason_[n] = {n, why, {}, via_[n], count};
    part.clear();
  }

  void filter_small() {
    for (auto& part : parts_) {
      if (!o_.allows_single_node_partition) {
        std::size_t count = compute_count(part, true);
        if (count <= 1) {
          drop(part, compute_count(part, false) == 0 ? LeftOutReason::NonComputeOnly : LeftOutReason::SingleNode,
               compute_count(part, false));
          continue;
        }
      }
      if (o_.min_partition_size > 0) {
        std::size_t count = compute_count(part, false);
        if (count < o_.min_partition_size) drop(part, LeftOutReason::BelowMinimum, count);
      }
    }
  }

  // torch's remove_bookend_non_compute_ops: a non-compute node all of whose inputs (or all of
  // whose users) lie outside the partition, are placeholders, or are such removed nodes.
  void remove_bookends() {
    std::vector<std::uint8_t> in_part(g_.num_slots(), 0), removed(g_.num_slots(), 0);
    std::vector<std::int8_t> input_side(g_.num_slots(), -1), output_side(g_.num_slots(), -1);
    for (auto& part : parts_) {
      for (NodeId n : part) in_part[n] = 1;
      std::vector<NodeId> kept;
      for (NodeId n : part) {
        if (is_non_compute(n) &&
            (transparent(n, true, in_part, removed, input_side) ||
             transparent(n, false, in_part, removed, output_side))) {
          removed[n] = 1;
          reason_[n] = {n, LeftOutReason::Bookend, {}, kNoNode, 0};
        } else {
          kept.push_back(n);
        }
      }
      for (NodeId n : part) in_part[n] = 0;
      part = std::move(kept);
    }
  }

  // torch's recursive check, iteratively (graphs can be deep). `memo` holds the answer for
  // nodes of the current partition (a node is in one partition only).
  bool transparent(NodeId start, bool inputs, const std::vector<std::uint8_t>& in_part,
                   const std::vector<std::uint8_t>& removed, std::vector<std::int8_t>& memo) {
    auto trivially = [&](NodeId n) { return g_.op(n) == OpKind::Placeholder || !in_part[n] || removed[n]; };
    auto neighbours = [&](NodeId n) -> std::vector<NodeId> {
      if (inputs) return {g_.inputs(n).begin(), g_.inputs(n).end()};
      return {g_.users(n).begin(), g_.users(n).end()};
    };
    if (trivially(start)) return true;
    if (memo[start] >= 0) return memo[start] == 1;
    if (!is_non_compute(start)) return (memo[start] = 0) == 1;
    struct Frame {
      NodeId node;
      std::vector<NodeId> next;
      std::size_t i = 0;
    };
    std::vector<Frame> stack;
    stack.push_back({start, neighbours(start)});
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.i == f.next.size()) {
        memo[f.node] = 1;
        stack.pop_back();
        continue;
      }
      NodeId m = f.next[f.i++];
      if (trivially(m) || memo[m] == 1) continue;
      if (memo[m] == 0 || !is_non_compute(m)) {
        memo[m] = 0;
        for (const Frame& open : stack) memo[open.node] = 0;
        return false;
      }
      stack.push_back({m, neighbours(m)});
    }
    return memo[start] == 1;
  }

  // Cuts a partition into runs of graph order: each run stays convex, and edges between runs
  // go forward, so no cycle appears.
  void split_large() {
    std::vector<std::vector<NodeId>> out;
    for (auto& part : parts_) {
      if (part.size() <= o_.max_partition_size) {
        out.push_back(std::move(part));
        continue;
      }
      for (std::size_t i = 0; i < part.size(); i += o_.max_partition_size)
        out.emplace_back(part.begin() + i, part.begin() + std::min(part.size(), i + o_.max_partition_size));
    }
    parts_ = std::move(out);
  }

  Result<Partitioning> finish() {
    Partitioning out;
    out.partition_of.assign(g_.num_slots(), kNone);
    for (auto& part : parts_) {
      if (part.empty()) continue;
      for (NodeId n : part) out.partition_of[n] = static_cast<std::uint32_t>(out.partitions.size());
      out.partitions.push_back(std::move(part));
    }
    for (NodeId n : order_) {
      if (!is_call(g_.op(n)) || out.partition_of[n] != kNone) continue;
      LeftOutNode r = reason_[n];
      r.node = n;
      if (candidate_[n] && r.blocked_by == kNoNode) r.blocked_by = via_[n];
      out.left_out.push_back(std::move(r));
    }
    return out;
  }

  const Graph& g_;
  const ModuleTable* modules_;
  const OperatorSupport& support_;
  const PartitionOptions& o_;
  std::vector<NodeId> order_;
  std::vector<std::uint32_t> pos_;
  std::vector<std::uint8_t> candidate_;
  std::vector<LeftOutNode> reason_;
  std::vector<std::uint32_t> level_;
  std::vector<NodeId> via_;
  std::vector<std::uint32_t> group_;
  std::vector<std::vector<NodeId>> parts_;
};

}  // namespace

std::string_view left_out_reason_name(LeftOutReason r) {
  switch (r) {
    case LeftOutReason::Unsupported: return "unsupported";
    case LeftOutReason::Excluded: return "excluded";
    case LeftOutReason::SingleNode: return "single_node";
    case LeftOutReason::NonComputeOnly: return "non_compute_only";
    case LeftOutReason::BelowMinimum: return "below_minimum";
    case LeftOutReason::Bookend: return "bookend";
    case LeftOutReason::GetitemOfOutside: return "getitem_of_outside";
  }
  return "?";
}

Result<Partitioning> propose_partitions(const Graph& g, const ModuleTable* modules, const OperatorSupport& support,
                                        const PartitionOptions& options) {
  return Partitioner(g, modules, support, options).run();
}

}  // namespace graft
