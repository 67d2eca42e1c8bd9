// A list scheduler that lowers the memory peak, keeping dependencies, writes and effects in order.
#include "graft/passes/memory_schedule.hpp"

#include <algorithm>
#include <queue>

#include "graft/ir/transaction.hpp"
#include "graft/passes/memory_plan.hpp"
#include "graft/passes/purity.hpp"

namespace graft {
namespace {

/// Edges a new order must keep, on top of the data dependencies.
struct Constraints {
  std::vector<std::vector<NodeId>> after;  ///< per slot: nodes that must come after it
  std::vector<std::uint32_t> before_count;  ///< per slot: nodes that must come before it
  void add(NodeId a, NodeId b) {
    if (a == b) return;
    after[a].push_back(b);
    ++before_count[b];
  }
};

Constraints constraints(const Graph& g, const OpSchemaRegistry& ops, const StorageMap& s,
                        const std::vector<NodeId>& order) {
  Constraints c;
  c.after.resize(g.num_slots());
  c.before_count.assign(g.num_slots(), 0);
  std::vector<std::vector<NodeId>> readers(s.buffers.size());
  for (NodeId n : order) {
    NodeIdList inputs = g.inputs(n);
    std::sort(inputs.begin(), inputs.end());
    inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
    for (NodeId in : inputs) c.add(in, n);
    for (std::uint32_t b : s.reads[n]) readers[b].push_back(n);
  }
  std::vector<std::uint32_t> pos(g.num_slots(), 0);
  for (std::uint32_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  NodeId last_effect = kNoNode;
  for (NodeId w : order) {
    const OpKind op = g.op(w);
    if (op == OpKind::Placeholder || op == OpKind::Output) continue;
    const bool effect = is_side_effectful(g, w, ops);
    if (!effect && s.may_write[w] == 0) continue;
    if (effect) {
      if (last_effect != kNoNode) c.add(last_effect, w);
      last_effect = w;
    }
    std::vector<std::uint32_t> written;
    for (NodeId m : mutated_inputs(g, w, ops)) written.insert(written.end(), s.refers[m].begin(), s.refers[m].end());
    if (s.may_write[w] != 0)  // no schema says which input it writes: any of them
      for (NodeId m : g.inputs(w)) written.insert(written.end(), s.refers[m].begin(), s.refers[m].end());
    for (std::uint32_t b : written)
      for (NodeId r : readers[b]) {
        if (pos[r] < pos[w]) c.add(r, w);
        else if (pos[r] > pos[w]) c.add(w, r);
      }
  }
  return c;
}

/// Greedy list scheduling: among the nodes whose predecessors have run, the one that leaves the
/// least memory allocated (allocates least net of what it frees), then the earliest in `order`.
std::vector<NodeId> greedy_order(const Graph& g, const StorageMap& s, const std::vector<NodeId>& order, Constraints c,
                                 std::uint64_t alignment) {
  std::vector<std::uint32_t> pos(g.num_slots(), 0);
  for (std::uint32_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  std::vector<std::uint32_t> remaining(s.buffers.size(), 0);
  for (NodeId n : order)
    for (std::uint32_t b : s.reads[n]) ++remaining[b];
  auto size = [&](std::uint32_t b) {
    return s.buffers[b].planned ? static_cast<std::int64_t>(align_up(s.buffers[b].bytes, alignment)) : 0;
  };
  std::vector<NodeId> out;
  out.reserve(order.size());
  std::vector<NodeId> ready;
  NodeId output = kNoNode;
  auto run = [&](NodeId n) {
    out.push_back(n);
    for (std::uint32_t b : s.reads[n]) --remaining[b];
    for (NodeId next : c.after[n])
      if (--c.before_count[next] == 0) {
        if (g.op(next) == OpKind::Output) output = next;
        else if (g.op(next) != OpKind::Placeholder) ready.push_back(next);
      }
  };
  for (NodeId n : order)  // placeholders first, in their order
    if (g.op(n) == OpKind::Placeholder) run(n);
  std::vector<char> queued(g.num_slots(), 0);
  for (NodeId n : ready) queued[n] = 1;
  for (NodeId n : order)
    if (c.before_count[n] == 0 && g.op(n) != OpKind::Placeholder && queued[n] == 0) {
      if (g.op(n) == OpKind::Output) output = n;
      else ready.push_back(n);
    }
  while (!ready.empty()) {
    std::size_t best = 0;
    std::int64_t best_net = 0, best_alloc = 0;
    for (std::size_t i = 0; i < ready.size(); ++i) {
      const NodeId n = ready[i];
      std::int64_t alloc = 0, freed = 0;
      for (std::uint32_t b = s.creates[n].first; b < s.creates[n].second; ++b) alloc += size(b);
      for (std::uint32_t b : s.reads[n])
        if (remaining[b] == 1 && s.buffers[b].kind != BufferKind::Output) freed += size(b);
      const std::int64_t net = alloc - freed;
      if (i == 0 || net < best_net ||
          (net == best_net && (alloc < best_alloc || (alloc == best_alloc && pos[n] < pos[ready[best]])))) {
        best = i;
        best_net = net;
        best_alloc = alloc;
      }
    }
    const NodeId n = ready[best];
    ready[best] = ready.back();
    ready.pop_back();
    run(n);
  }
  if (output != kNoNode) out.push_back(output);
  return out;
}

/// Every node as late as its users allow (reverse list scheduling, the latest in `order` first):
/// allocations move next to their first reader, so fewer tensors wait live.
std::vector<NodeId> late_order(const Graph& g, const std::vector<NodeId>& order, const Constraints& c) {
  std::vector<std::uint32_t> pos(g.num_slots(), 0);
  for (std::uint32_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  std::vector<std::vector<NodeId>> before(g.num_slots());
  std::vector<std::uint32_t> waiting(g.num_slots(), 0);  // successors not yet placed
  for (NodeId n : order)
    for (NodeId next : c.after[n]) {
      before[next].push_back(n);
      ++waiting[n];
    }
  std::priority_queue<std::pair<std::uint32_t, NodeId>> ready;  // latest first
  for (NodeId n : order)
    if (waiting[n] == 0 && g.op(n) != OpKind::Placeholder) ready.emplace(pos[n], n);
  std::vector<NodeId> reversed;
  reversed.reserve(order.size());
  while (!ready.empty()) {
    const NodeId n = ready.top().second;
    ready.pop();
    reversed.push_back(n);
    for (NodeId p : before[n])
      if (--waiting[p] == 0 && g.op(p) != OpKind::Placeholder) ready.emplace(pos[p], p);
  }
  std::vector<NodeId> out;
  out.reserve(order.size());
  for (NodeId n : order)  // placeholders first, in their order
    if (g.op(n) == OpKind::Placeholder) out.push_back(n);
  out.insert(out.end(), reversed.rbegin(), reversed.rend());
  return out;
}

}  // namespace

Result<ScheduleReport> schedule_for_memory(Graph& g, const OpSchemaRegistry& ops, const LivenessOptions& options,
                                           std::uint64_t alignment) {
  if (Status s = check_alignment(alignment); !s) return s;
  Result<StorageMap> storage = map_storage(g, ops, options);
  if (!storage) return storage.status();
  const std::vector<NodeId> order = g.node_list();
  ScheduleReport report;
  report.peak_before = live_peak(live_ranges(*storage, order, g.num_slots()), alignment).bytes;
  report.peak_after = report.peak_before;
  const Constraints c = constraints(g, ops, *storage, order);
  std::vector<NodeId> scheduled;
  std::uint64_t peak = report.peak_before;
  for (std::vector<NodeId> candidate : {greedy_order(g, *storage, order, c, alignment), late_order(g, order, c)}) {
    if (candidate.size() != order.size())
      return Status::error("the graph has a cycle or a use before its definition; run lint");
    const std::uint64_t p = live_peak(live_ranges(*storage, candidate, g.num_slots()), alignment).bytes;
    if (p < peak) {
      peak = p;
      scheduled = std::move(candidate);
    }
  }
  if (scheduled.empty()) return report;
  Transaction t(g);
  std::vector<NodeId> was_after(g.num_slots(), kNoNode);
  for (std::size_t i = 1; i < order.size(); ++i) was_after[order[i]] = order[i - 1];
  NodeId prev = kNoNode;
  for (std::size_t i = 0; i < scheduled.size(); ++i) {
    const NodeId n = scheduled[i];
    if (was_after[n] != prev) ++report.moved;
    if (prev != kNoNode && g.next(prev) != n)
      if (Status s = g.move_after(n, prev); !s) return s;
    if (prev == kNoNode && g.first() != n)
      if (Status s = g.move_before(n, g.first()); !s) return s;
    prev = n;
  }
  t.commit();
  report.peak_after = peak;
  return report;
}

}  // namespace graft
