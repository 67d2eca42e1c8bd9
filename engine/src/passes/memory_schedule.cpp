// A list scheduler that lowers the memory peak, keeping dependencies, writes and effects in order.
#include "graft/passes/memory_schedule.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <queue>
#include <span>

#include "graft/ir/transaction.hpp"
#include "graft/passes/memory_plan.hpp"
#include "graft/passes/purity.hpp"

namespace graft {
namespace {

/// The scheduler's walks may list this many buffers per node and edge, or kWalkBudgetFloor in
/// all if that is more (about 0.1 s of walking), before it gives up.
constexpr std::size_t kWalkBudgetPerItem = 64;
constexpr std::size_t kWalkBudgetFloor = std::size_t{1} << 24;

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

/// Per node slot, a list of buffers, in one flat array.
struct BufferLists {
  std::vector<std::uint32_t> start{0};  ///< per slot, and one past the last
  std::vector<std::uint32_t> items;
  [[nodiscard]] std::span<const std::uint32_t> of(NodeId n) const {
    return {items.data() + start[n], items.data() + start[n + 1]};
  }
};

/// The buffers each node reads and writes, walked once (held sets included). Calls of unknown
/// aliasing hold their inputs' sets, so along a chain of them every node reaches every buffer
/// before it and the walks grow with the square of the chain: past `budget` entries in all,
/// nothing is returned and the scheduler leaves the order as it is.
struct NodeBuffers {
  BufferLists reads, writes;
};

std::optional<NodeBuffers> walk_buffers(const Graph& g, const OpSchemaRegistry& ops, const StorageMap& s,
                                        std::size_t budget) {
  NodeBuffers out;
  BufferSetWalker walker(s);
  std::size_t walked = 0;
  for (NodeId n = 0; n < g.num_slots(); ++n) {
    if (g.is_alive(n)) {
      const std::vector<std::uint32_t>& read = walker.buffers(s.reads[n]);
      out.reads.items.insert(out.reads.items.end(), read.begin(), read.end());
      const OpKind op = g.op(n);
      if (op != OpKind::Placeholder && op != OpKind::Output && (s.may_write[n] != 0 || is_side_effectful(g, n, ops))) {
        const std::vector<std::uint32_t>& written = walker.buffers(written_sets(g, ops, s, n));
        out.writes.items.insert(out.writes.items.end(), written.begin(), written.end());
      }
      walked = out.reads.items.size() + out.writes.items.size();
      if (walked > budget) return std::nullopt;
    }
    out.reads.start.push_back(static_cast<std::uint32_t>(out.reads.items.size()));
    out.writes.start.push_back(static_cast<std::uint32_t>(out.writes.items.size()));
  }
  return out;
}

Constraints constraints(const Graph& g, const OpSchemaRegistry& ops, const StorageMap& s, const NodeBuffers& buffers,
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
  NodeId last_effect = kNoNode;
  for (NodeId w : order) {
    const OpKind op = g.op(w);
    if (op == OpKind::Placeholder || op == OpKind::Output || !is_side_effectful(g, w, ops)) continue;
    if (last_effect != kNoNode) c.add(last_effect, w);
    last_effect = w;
  }
  // A write stays in order against every other use of the buffers it writes. One sweep each way
  // gives every use an edge from the write before it and to the write after it; with the writes
  // of a buffer chained the same way, that orders every write against every use, with one entry
  // per buffer instead of a list of its readers.
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
      for (std::uint32_t b : buffers.reads.of(n)) link(b);
      for (std::uint32_t b : buffers.writes.of(n)) {
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
/// A ready node's score changes only when it becomes the last reader of a buffer, so the ready
/// nodes wait in a heap, and such a node is pushed again with its new score.
std::vector<NodeId> greedy_order(const Graph& g, const StorageMap& s, const NodeBuffers& buffers,
                                 const std::vector<NodeId>& order, Constraints c, std::uint64_t alignment) {
  std::vector<std::uint32_t> pos(g.num_slots(), 0);
  for (std::uint32_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  // Per buffer, the nodes reading it (the transpose of buffers.reads).
  BufferLists readers;
  readers.start.assign(s.buffers.size() + 1, 0);
  for (std::uint32_t b : buffers.reads.items) ++readers.start[b + 1];
  for (std::size_t b = 0; b < s.buffers.size(); ++b) readers.start[b + 1] += readers.start[b];
  readers.items.resize(buffers.reads.items.size());
  {
    std::vector<std::uint32_t> fill(readers.start.begin(), readers.start.end() - 1);
    for (NodeId n : order)
      for (std::uint32_t b : buffers.reads.of(n)) readers.items[fill[b]++] = n;
  }
  std::vector<std::uint32_t> remaining(s.buffers.size(), 0);
  for (std::size_t b = 0; b < s.buffers.size(); ++b) remaining[b] = readers.start[b + 1] - readers.start[b];
  auto size = [&](std::uint32_t b) {
    return s.buffers[b].planned ? static_cast<std::int64_t>(align_up(s.buffers[b].bytes, alignment)) : 0;
  };
  auto frees = [&](std::uint32_t b) { return s.buffers[b].kind != BufferKind::Output ? size(b) : 0; };

  struct Entry {
    std::int64_t net, alloc;
    std::uint32_t pos;
    NodeId n;
    bool operator>(const Entry& o) const {
      return net != o.net ? net > o.net : alloc != o.alloc ? alloc > o.alloc : pos > o.pos;
    }
  };
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  std::vector<std::int64_t> net(g.num_slots(), 0), alloc(g.num_slots(), 0);
  std::vector<char> state(g.num_slots(), 0);  // 0 waiting, 1 ready, 2 run
  auto make_ready = [&](NodeId n) {
    std::int64_t freed = 0;
    for (std::uint32_t b = s.creates[n].first; b < s.creates[n].second; ++b) alloc[n] += size(b);
    for (std::uint32_t b : buffers.reads.of(n))
      if (remaining[b] == 1) freed += frees(b);
    net[n] = alloc[n] - freed;
    state[n] = 1;
    ready.push({net[n], alloc[n], pos[n], n});
  };
  std::vector<NodeId> out;
  out.reserve(order.size());
  NodeId output = kNoNode;
  std::vector<NodeId> became_ready;
  auto run = [&](NodeId n) {
    out.push_back(n);
    state[n] = 2;
    for (std::uint32_t b : buffers.reads.of(n)) {
      if (--remaining[b] != 1) continue;
      for (std::uint32_t i = readers.start[b]; i < readers.start[b + 1]; ++i) {  // once per buffer
        const NodeId r = readers.items[i];
        if (state[r] == 2) continue;
        if (state[r] == 1 && frees(b) != 0) {
          net[r] -= frees(b);
          ready.push({net[r], alloc[r], pos[r], r});
        }
        break;
      }
    }
    for (NodeId next : c.after[n])
      if (--c.before_count[next] == 0) {
        if (g.op(next) == OpKind::Output) output = next;
        else if (g.op(next) != OpKind::Placeholder) became_ready.push_back(next);
      }
  };
  for (NodeId n : order)  // placeholders first, in their order
    if (g.op(n) == OpKind::Placeholder) run(n);
  for (NodeId n : order)
    if (c.before_count[n] == 0 && g.op(n) != OpKind::Placeholder) {
      if (g.op(n) == OpKind::Output) output = n;
      else became_ready.push_back(n);
    }
  for (NodeId n : became_ready)
    if (state[n] == 0) make_ready(n);
  became_ready.clear();
  while (!ready.empty()) {
    const Entry e = ready.top();
    ready.pop();
    if (state[e.n] != 1 || e.net != net[e.n]) continue;  // run already, or pushed again since
    run(e.n);
    for (NodeId n : became_ready) make_ready(n);
    became_ready.clear();
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
  std::size_t edges = 0;
  for (NodeId n : order) edges += storage->reads[n].size();
  const std::optional<NodeBuffers> buffers =
      walk_buffers(g, ops, *storage, std::max(kWalkBudgetFloor, kWalkBudgetPerItem * (order.size() + edges)));
  if (!buffers) {
    report.skipped = "the buffers reached through calls of unknown aliasing are too many to schedule in linear time";
    return report;
  }
  const Constraints c = constraints(g, ops, *storage, *buffers, order);
  std::vector<NodeId> scheduled;
  std::uint64_t peak = report.peak_before;
  for (std::vector<NodeId> candidate :
       {greedy_order(g, *storage, *buffers, order, c, alignment), late_order(g, order, c)}) {
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
