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

/// The sets of the buffers `w` writes: those of the inputs a schema (or `inplace=True`) says it
/// writes, and for a call that may write without saying which, those of all its inputs.
std::vector<std::uint32_t> written_sets(const Graph& g, const OpSchemaRegistry& ops, const StorageMap& s, NodeId w) {
  std::vector<std::uint32_t> written;
  for (NodeId m : mutated_inputs(g, w, ops)) written.push_back(s.value[m]);
  if (s.may_write[w] != 0)  // no schema says which input it writes: any of them
    for (NodeId m : g.inputs(w)) written.push_back(s.value[m]);
  return written;
}

Constraints constraints(const Graph& g, const OpSchemaRegistry& ops, const StorageMap& s,
                        const std::vector<NodeId>& order) {
  Constraints c;
  c.after.resize(g.num_slots());
  c.before_count.assign(g.num_slots(), 0);
  for (NodeId n : order) {
    NodeIdList inputs = g.inputs(n);
    std::sort(inputs.begin(), inputs.end());
    inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
    for (NodeId in : inputs) c.add(in, n);
  }
  // Per node, the sets it writes (empty for a node that writes nothing)
  std::vector<std::vector<std::uint32_t>> written(g.num_slots());
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
    written[w] = written_sets(g, ops, s, w);
  }
  // A write stays in order against every other use of the buffers it writes. One sweep each way
  // gives every use an edge from the write before it and to the write after it; with the writes
  // of a buffer chained the same way, that orders every write against every use, with one entry
  // per buffer instead of a list of its readers.
  BufferSetWalker reads(s), writes(s);
  std::vector<NodeId> write_of(s.buffers.size(), kNoNode);
  std::vector<NodeId> linked(g.num_slots(), kNoNode);  // the node the last edge of this sweep went to/from
  auto sweep = [&](auto begin, auto end, bool forward) {
    std::fill(write_of.begin(), write_of.end(), kNoNode);
    std::fill(linked.begin(), linked.end(), kNoNode);
    for (auto it = begin; it != end; ++it) {
      const NodeId n = *it;
      auto link = [&](std::uint32_t b) {
        const NodeId w = write_of[b];
        if (w == kNoNode || w == n || linked[w] == n) return;
        linked[w] = n;
        if (forward) c.add(w, n);
        else c.add(n, w);
      };
      for (std::uint32_t b : reads.buffers(s.reads[n])) link(b);
      if (written[n].empty()) continue;
      for (std::uint32_t b : writes.buffers(written[n])) {
        link(b);
        write_of[b] = n;
      }
    }
  };
  sweep(order.begin(), order.end(), true);
  sweep(order.rbegin(), order.rend(), false);
  return c;
}

/// Greedy list scheduling: among the nodes whose predecessors have run, the one that leaves the
/// least memory allocated (allocates least net of what it frees), then the earliest in `order`.
std::vector<NodeId> greedy_order(const Graph& g, const StorageMap& s, const std::vector<NodeId>& order, Constraints c,
                                 std::uint64_t alignment) {
  std::vector<std::uint32_t> pos(g.num_slots(), 0);
  for (std::uint32_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  BufferSetWalker walker(s);
  std::vector<std::uint32_t> remaining(s.buffers.size(), 0);
  for (NodeId n : order)
    for (std::uint32_t b : walker.buffers(s.reads[n])) ++remaining[b];
  auto size = [&](std::uint32_t b) {
    return s.buffers[b].planned ? static_cast<std::int64_t>(align_up(s.buffers[b].bytes, alignment)) : 0;
  };
  std::vector<NodeId> out;
  out.reserve(order.size());
  std::vector<NodeId> ready;
  NodeId output = kNoNode;
  auto run = [&](NodeId n) {
    out.push_back(n);
    for (std::uint32_t b : walker.buffers(s.reads[n])) --remaining[b];
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
      for (std::uint32_t b : walker.buffers(s.reads[n]))
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
