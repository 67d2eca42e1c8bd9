// propose_partitions: levels in one reverse sweep, then torch's post-processing.
#include "graft/analysis/partitioner.hpp"

#include "edge_merge.hpp"

#include <algorithm>
#include <map>

namespace graft {
namespace {

constexpr std::uint32_t kNone = kNoNode;

bool is_call(OpKind op) { return op == OpKind::CallFunction || op == OpKind::CallMethod || op == OpKind::CallModule; }

// What a call_function's target is, decided once per target.
enum TargetFlag : std::uint8_t {
  kGetitem = 1,
  kNonCompute = 2,  // view, getitem and non_compute_ops: not counted by the single-node filter
  kCountsTwice = 4,  // allowed_single_node_partition_ops
  kBookendable = 8,  // non_compute_ops only: what remove_bookend_non_compute_ops may drop
  kCallFunction = 16,
  kCall = 32,  // call_function, call_method or call_module: what the partitioner decides on
  // A getitem whose only node input is the tuple it reads (`t[0]`, not `x[i]` with `i` a node):
  // only such a getitem follows its producer, since moving `x[i]` could close a cycle via `i`.
  kTupleGetitem = 64,
};

class Partitioner {
 public:
  Partitioner(const Graph& g, const ModuleTable* modules, const OperatorSupport& support, const PartitionOptions& o)
      : g_(g), modules_(modules), support_(support), o_(o) {}

  Result<Partitioning> run() {
    flag_targets();
    if (Status s = decide_support(); !s) return s;
    if (!o_.skip_horizontal_fusion) {
      follow_producers();
      compute_levels();  // the edge-merging mode needs neither levels nor what blocked a node
    }
    group();
    reassign_getitems();
    collect();
    if (o_.max_partition_size > 0) split_large();
    filter_small();
    if (o_.remove_bookend_non_compute_ops) remove_bookends();
    return finish();
  }

 private:
  // --- support --------------------------------------------------------------------------------
  void flag_targets() {
    const SymbolTable& symbols = g_.symbols();
    auto listed = [](const std::vector<std::string>& list, const std::string& t) {
      return std::find(list.begin(), list.end(), t) != list.end();
    };
    flags_.assign(symbols.size(), 0);
    for (Symbol s = 0; s < symbols.size(); ++s) {
      const std::string& t = symbols.text(s);
      std::uint8_t f = 0;
      if (t == "_operator.getitem") f |= kGetitem | kNonCompute;
      if (t == "torch.ops.aten.view") f |= kNonCompute;
      if (listed(o_.non_compute_ops, t)) f |= kNonCompute | kBookendable;
      if (listed(o_.allowed_single_node_partition_ops, t)) f |= kCountsTwice;
      flags_[s] = f;
    }
  }

  // A node's target flags, copied per slot while deciding support: later passes read these
  // bytes instead of the nodes (on big graphs every node read is a cache miss).
  bool has(NodeId n, TargetFlag f) const { return (kind_[n] & f) != 0; }

  bool excluded(NodeId n) const { return why_[n] == static_cast<std::uint8_t>(LeftOutReason::Excluded) + 1; }

  void leave_out(NodeId n, LeftOutReason why, std::uint32_t detail = 0) {
    why_[n] = static_cast<std::uint8_t>(why) + 1;
    detail_[n] = detail;
  }

  Status decide_support() {
    candidate_.assign(g_.num_slots(), 0);
    kind_.assign(g_.num_slots(), 0);
    why_.assign(g_.num_slots(), 0);
    detail_.assign(g_.num_slots(), 0);
    for (const std::string& name : o_.exclude_nodes) {
      NodeId n = g_.find(name);
      if (n == kNoNode) return Status::error("exclude_nodes: the graph has no node named '" + name + "'");
      leave_out(n, LeftOutReason::Excluded);
    }
    // A verdict per (target, op) when the rules promise to look at nothing else: 0 supported,
    // r + 1 declined by rule r.
    const bool by_target = support_.depends_only_on_target();
    constexpr std::uint32_t kUnknown = ~0u;
    std::vector<std::uint32_t> memo(by_target ? g_.symbols().size() * 8 : 0, kUnknown);
    std::map<std::string, std::uint32_t> rule_index;
    auto decide = [&](NodeId n) -> std::uint32_t {
      SupportVerdict v = support_.decide(g_, modules_, n);
      if (v.supported) return 0;
      auto [it, fresh] = rule_index.emplace(v.rule, static_cast<std::uint32_t>(rules_.size()));
      if (fresh) rules_.push_back(std::move(v.rule));
      return it->second + 1;
    };
    // One walk of the node list records the order, checks it is topological (a pass may have
    // broken it and not yet run lint; levels need it) and decides: each node is read once.
    order_.clear();
    order_.reserve(g_.size());
    std::vector<std::uint8_t> producer_listed(g_.num_slots(), 0);
    std::vector<std::uint8_t>& seen = producer_listed;  // bit 1: already walked; bit 0: listed
    for (NodeId n = g_.first(); n != kNoNode; n = g_.next(n)) {
      order_.push_back(n);
      for (NodeId input : g_.inputs(n))
        if (!(seen[input] & 2))
          return Status::node_error(
              g_.name(n), "uses '" + g_.name(input) + "' before it is defined: the graph's order is not topological");
      seen[n] |= 2;
      const OpKind op = g_.op(n);
      if (!is_call(op)) continue;
      kind_[n] = static_cast<std::uint8_t>(
          kCall | (op == OpKind::CallFunction ? kCallFunction | flags_[g_.target_symbol(n)] : 0));
      if ((kind_[n] & kGetitem) && g_.inputs(n).size() == 1) {
        kind_[n] |= kTupleGetitem;
        // getitem producers, in the order of their first getitem: a producer comes before the
        // getitems it feeds, so nested getitems are visited after their producer.
        const NodeId producer = g_.inputs(n).front();
        if (!(producer_listed[producer] & 1)) {
          producer_listed[producer] |= 1;
          getitem_producers_.push_back(producer);
        }
      }
      if (why_[n] != 0) continue;
      std::uint32_t verdict;
      if (by_target) {
        std::uint32_t& slot = memo[std::size_t(g_.target_symbol(n)) * 8 + std::size_t(op)];
        if (slot == kUnknown) slot = decide(n);
        verdict = slot;
      } else {
        verdict = decide(n);
      }
      if (verdict == 0) candidate_[n] = 1;
      else leave_out(n, LeftOutReason::Unsupported, verdict - 1);
    }
    return Status::ok();
  }

  // A getitem goes where its producer goes. torch moves getitems after growing partitions;
  // with levels that would let a getitem that leaves raise its neighbours' levels and split a
  // partition for nothing, so it is decided up front (graph order: nested getitems follow).
  // Merging along edges (skip_horizontal_fusion) keeps torch's order, and its results.
  void follow_producers() {
    for (NodeId n : getitem_producers_) {
      const UserList& users = g_.users(n);
      if (users.empty() || !std::all_of(users.begin(), users.end(), [&](NodeId u) { return has(u, kTupleGetitem); }))
        continue;
      for (NodeId u : users) {
        if (excluded(u)) continue;
        candidate_[u] = candidate_[n];
        if (candidate_[n]) why_[u] = 0;
        else leave_out(u, LeftOutReason::GetitemOfOutside);
      }
    }
  }

  // --- levels ---------------------------------------------------------------------------------
  // A candidate's level: the most times a path from it to a candidate passes through
  // unsupported nodes (a run of them in a row counts once). A
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
    for (NodeId n : getitem_producers_) {
      const UserList& users = g_.users(n);
      if (users.empty()) continue;
      bool all = std::all_of(users.begin(), users.end(), [&](NodeId u) { return has(u, kTupleGetitem); });
      if (!all) continue;
      for (NodeId u : users) {
        if (excluded(u)) continue;
        group_[u] = group_[n];
        if (group_[n] == kNone && candidate_[u]) leave_out(u, LeftOutReason::GetitemOfOutside);
      }
    }
  }

  // Groups become partitions in the order of their numbers: the group grown first, nearest the
  // end of the graph, first (torch returns partitions by id).
  void collect() {
    std::uint32_t top = 0;
    for (NodeId n : order_)
      if (group_[n] != kNone) top = std::max(top, group_[n] + 1);
    std::vector<std::uint32_t> index(top, kNone);
    for (NodeId n : order_)
      if (group_[n] != kNone) index[group_[n]] = 0;
    std::uint32_t count = 0;
    for (std::uint32_t& i : index)
      if (i == 0) i = count++;
    parts_.resize(count);
    for (NodeId n : order_)
      if (group_[n] != kNone) parts_[index[group_[n]]].push_back(n);
  }

  // --- post-processing ------------------------------------------------------------------------
  // torch counts call_function nodes only; allowed single-node ops count twice when `doubled`.
  std::size_t compute_count(const std::vector<NodeId>& part, bool doubled) const {
    std::size_t count = 0;
    for (NodeId n : part) {
      const std::uint8_t f = kind_[n];
      if (!(f & kCallFunction)) continue;
      count += (f & kNonCompute) ? 0 : 1;
      count += doubled && (f & kCountsTwice) ? 1 : 0;
    }
    return count;
  }

  void drop(std::vector<NodeId>& part, LeftOutReason why, std::size_t count) {
    for (NodeId n : part) leave_out(n, why, static_cast<std::uint32_t>(count));
    part.clear();
  }

  void filter_small() {
    for (auto& part : parts_) {
      if (!o_.allows_single_node_partition && compute_count(part, true) <= 1) {
        const std::size_t count = compute_count(part, false);
        drop(part, count == 0 ? LeftOutReason::NonComputeOnly : LeftOutReason::SingleNode, count);
        continue;
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
        if (has(n, kBookendable) &&
            (transparent(n, true, in_part, removed, input_side) ||
             transparent(n, false, in_part, removed, output_side))) {
          removed[n] = 1;
          leave_out(n, LeftOutReason::Bookend);
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
    if (!has(start, kBookendable)) return (memo[start] = 0) == 1;
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
      if (memo[m] == 0 || !has(m, kBookendable)) {
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
  // A getitem cut off from its producer moves back to the producer's run (it only reads the
  // producer, and comes after every node of that run), so a run may exceed the maximum by them.
  void split_large() {
    std::vector<std::vector<NodeId>> out;
    std::vector<std::uint32_t> run_of(g_.num_slots(), kNone);
    for (auto& part : parts_) {
      if (part.size() <= o_.max_partition_size) {
        out.push_back(std::move(part));
        continue;
      }
      const std::size_t first = out.size();
      for (std::size_t i = 0; i < part.size(); i += o_.max_partition_size) {
        out.emplace_back();
        for (std::size_t k = i; k < std::min(part.size(), i + o_.max_partition_size); ++k) {
          const NodeId n = part[k];
          const std::uint32_t producer_run = has(n, kTupleGetitem) ? run_of[g_.inputs(n).front()] : kNone;
          const bool follows = producer_run != kNone && producer_run >= first;
          const std::uint32_t run = follows ? producer_run : static_cast<std::uint32_t>(out.size() - 1);
          out[run].push_back(n);
          run_of[n] = run;
        }
      }
    }
    out.erase(std::remove_if(out.begin(), out.end(), [](const auto& run) { return run.empty(); }), out.end());
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
      if (!has(n, kCall) || out.partition_of[n] != kNone) continue;
      LeftOutNode r;
      r.node = n;
      r.reason = static_cast<LeftOutReason>(why_[n] - 1);
      if (r.reason == LeftOutReason::Unsupported) r.rule = rules_[detail_[n]];
      else r.compute_nodes = detail_[n];
      const bool dropped = r.reason == LeftOutReason::SingleNode || r.reason == LeftOutReason::NonComputeOnly ||
          r.reason == LeftOutReason::BelowMinimum;
      if (dropped && !o_.skip_horizontal_fusion) r.blocked_by = via_[n];
      out.left_out.push_back(std::move(r));
    }
    return out;
  }

  const Graph& g_;
  const ModuleTable* modules_;
  const OperatorSupport& support_;
  const PartitionOptions& o_;
  std::vector<NodeId> order_;
  std::vector<NodeId> getitem_producers_;  // nodes some getitem reads, producers first
  std::vector<std::uint8_t> flags_;  // per target symbol: TargetFlag bits
  std::vector<std::uint8_t> candidate_;
  std::vector<std::uint8_t> kind_;  // per slot: TargetFlag bits
  std::vector<std::uint8_t> why_;  // per slot: 0, or 1 + the LeftOutReason
  std::vector<std::uint32_t> detail_;  // Unsupported: index into rules_; dropped: the compute count
  std::vector<std::string> rules_;  // the rules that declined nodes
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
