// Offset planners (greedy by size, breadth and lifetime; exact branch and bound) and the plan check.
#include <fmt/core.h>
#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <numeric>
#include <queue>
#include <set>

#include "graft/passes/memory_plan.hpp"

namespace graft {
namespace {

using Clock = std::chrono::steady_clock;

double since_ms(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// The buffers to place (planned, not empty) with their aligned sizes, and for each the others
/// live at some common step. Past kMaxConflicts pairs, or kConflictsPerBuffer per buffer on a
/// larger graph (thousands of tensors live together), the lists are not kept, and placing scans
/// every placed buffer instead: quadratic time, linear memory.
struct Problem {
  std::vector<std::uint32_t> ids;  ///< Liveness buffer ids
  std::vector<std::uint64_t> size;
  std::vector<std::uint32_t> first, last;
  std::vector<std::vector<std::uint32_t>> conflicts;  ///< indices into ids, ascending
  bool dense = false;  ///< conflicts not listed
  bool overlap(std::uint32_t a, std::uint32_t b) const { return first[a] <= last[b] && first[b] <= last[a]; }
};

constexpr std::size_t kMaxConflicts = std::size_t{1} << 23;
/// A graph of a million nodes with a dozen tensors live at every step has 16M pairs: far from
/// dense, and scanning every placed buffer there took hours.
constexpr std::size_t kConflictsPerBuffer = 32;

Problem make_problem(const Liveness& l, std::uint64_t alignment) {
  Problem p;
  for (std::uint32_t b = 0; b < l.buffers.size(); ++b) {
    const Buffer& buf = l.buffers[b];
    if (!buf.planned || buf.bytes == 0) continue;
    p.ids.push_back(b);
    p.size.push_back(align_up(buf.bytes, alignment));
    p.first.push_back(buf.first);
    p.last.push_back(buf.last);
  }
  const std::size_t n = p.ids.size();
  std::vector<std::uint32_t> by_first(n);
  std::iota(by_first.begin(), by_first.end(), 0U);
  std::stable_sort(by_first.begin(), by_first.end(), [&](auto a, auto b) { return p.first[a] < p.first[b]; });
  // Count the pairs before listing any (a fan of 100k tensors live together has 5e9): the k-th
  // buffer by start meets every earlier one except those that ended before it starts.
  std::vector<std::uint32_t> lasts(p.last);
  std::sort(lasts.begin(), lasts.end());
  std::size_t pairs = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const auto ended =
        static_cast<std::size_t>(std::lower_bound(lasts.begin(), lasts.end(), p.first[by_first[k]]) - lasts.begin());
    pairs += k - ended;
  }
  if (pairs > std::max(kMaxConflicts, kConflictsPerBuffer * n)) {
    p.conflicts.assign(n, {});
    p.dense = true;
    return p;
  }
  p.conflicts.resize(n);
  std::vector<std::uint32_t> active;
  for (std::uint32_t i : by_first) {
    std::erase_if(active, [&](std::uint32_t a) { return p.last[a] < p.first[i]; });
    for (std::uint32_t a : active) {
      p.conflicts[i].push_back(a);
      p.conflicts[a].push_back(i);
    }
    active.push_back(i);
  }
  for (auto& c : p.conflicts) std::sort(c.begin(), c.end());
  return p;
}

/// Places buffers one at a time, each in the smallest gap that holds it among the placed
/// buffers it conflicts with (the lowest such gap on a tie), else on top of them.
///
/// Without conflict lists (dense), the placed buffers are kept by offset and scanned, except
/// when the buffer is live with every placed one (none starts after it ends or ends before it
/// starts), as each is in a long chain of values kept live to the end: then its gaps are the
/// gaps between all placed buffers, kept merged and by size, and it is placed in O(log n).
class BestFit {
 public:
  explicit BestFit(const Problem& p) : p_(p), offset_(p.ids.size(), kNotPlanned) {}

  void place(std::uint32_t i) {
    const std::uint64_t at = p_.dense && max_first_ <= p_.last[i] && min_last_ >= p_.first[i] ? fit_all(i) : fit(i);
    offset_[i] = at;
    arena_ = std::max(arena_, at + p_.size[i]);
    if (!p_.dense) return;
    placed_.emplace(at, i);
    cover(at, at + p_.size[i]);
    max_first_ = std::max(max_first_, p_.first[i]);
    min_last_ = std::min(min_last_, p_.last[i]);
  }
  std::vector<std::uint64_t>& offsets() { return offset_; }
  std::uint64_t arena() const { return arena_; }

 private:
  using Covered = std::map<std::uint64_t, std::uint64_t>;  // begin -> end: merged, never touching

  /// The smallest gap among the placed buffers that conflict with `i`, or the top of them.
  std::uint64_t fit(std::uint32_t i) {
    spans_.clear();
    if (p_.dense) {  // placed_ is kept by offset: the spans come out sorted
      for (const auto& [at, c] : placed_)
        if (p_.overlap(i, c)) spans_.emplace_back(at, at + p_.size[c]);
    } else {
      for (std::uint32_t c : p_.conflicts[i])
        if (offset_[c] != kNotPlanned) spans_.emplace_back(offset_[c], offset_[c] + p_.size[c]);
      std::sort(spans_.begin(), spans_.end());
    }
    std::uint64_t best = kNotPlanned, best_gap = kNotPlanned, cursor = 0;
    for (const auto& [begin, end] : spans_) {
      if (begin > cursor) {
        const std::uint64_t gap = begin - cursor;
        if (gap >= p_.size[i] && gap < best_gap) {
          best_gap = gap;
          best = cursor;
        }
      }
      cursor = std::max(cursor, end);
    }
    return best == kNotPlanned ? cursor : best;
  }

  /// fit(i) when `i` conflicts with every placed buffer: the smallest gap (the lowest on a tie).
  std::uint64_t fit_all(std::uint32_t i) const {
    const auto gap = gaps_.lower_bound({p_.size[i], 0});
    if (gap != gaps_.end()) return gap->second;
    return covered_.empty() ? 0 : covered_.rbegin()->second;
  }

  /// The free bytes below the interval at `it` (from the one before it, or from 0).
  std::pair<std::uint64_t, std::uint64_t> gap_below(Covered::const_iterator it) const {
    const std::uint64_t from = it == covered_.begin() ? 0 : std::prev(it)->second;
    return {it->first - from, from};
  }

  /// Adds [begin, end) to the covered bytes, keeping the gaps between them.
  void cover(std::uint64_t begin, std::uint64_t end) {
    auto lo = covered_.upper_bound(begin);
    if (lo != covered_.begin() && std::prev(lo)->second >= begin) --lo;
    auto hi = lo;
    while (hi != covered_.end() && hi->first <= end) ++hi;
    for (auto it = lo; it != hi; ++it) gaps_.erase(gap_below(it));
    if (hi != covered_.end()) gaps_.erase(gap_below(hi));
    if (lo != hi) {
      begin = std::min(begin, lo->first);
      end = std::max(end, std::prev(hi)->second);
    }
    covered_.erase(lo, hi);
    const auto merged = covered_.emplace(begin, end).first;
    for (auto it : {merged, std::next(merged)})
      if (it != covered_.end())
        if (const auto gap = gap_below(it); gap.first > 0) gaps_.insert(gap);
  }

  const Problem& p_;
  std::vector<std::uint64_t> offset_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans_;
  std::set<std::pair<std::uint64_t, std::uint32_t>> placed_;  ///< dense: (offset, buffer)
  Covered covered_;  ///< dense: the bytes some placed buffer takes
  std::set<std::pair<std::uint64_t, std::uint64_t>> gaps_;  ///< dense: (size, offset) of each gap below the top
  std::uint32_t max_first_ = 0, min_last_ = std::numeric_limits<std::uint32_t>::max();
  std::uint64_t arena_ = 0;
};

Result<std::vector<std::uint64_t>> place_in_order(const Problem& p, const std::vector<std::uint32_t>& order,
                                                  std::uint64_t& arena, const std::function<Status(double)>& poll) {
  BestFit fit(p);
  for (std::size_t k = 0; k < order.size(); ++k) {
    fit.place(order[k]);
    if (poll && (k & 1023U) == 1023U)
      if (Status s = poll(static_cast<double>(1024 * (p.dense ? k : 16))); !s) return s;
  }
  arena = fit.arena();
  return std::move(fit.offsets());
}

std::vector<std::uint32_t> order_by(const Problem& p, Planner planner) {
  std::vector<std::uint32_t> order(p.ids.size());
  std::iota(order.begin(), order.end(), 0U);
  if (planner == Planner::GreedyBySize) {
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) {
      if (p.size[a] != p.size[b]) return p.size[a] > p.size[b];
      return p.first[a] < p.first[b];
    });
  } else if (planner == Planner::GreedyByLifetime) {
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) {
      const std::uint32_t la = p.last[a] - p.first[a], lb = p.last[b] - p.first[b];
      return la != lb ? la > lb : p.size[a] > p.size[b];
    });
  } else {
    // Breadth: the steps by total live size, busiest first; a buffer goes with the first of
    // them it is live at, largest first within a step. Only steps where a buffer starts matter
    // (the live total only grows there); a sparse table finds each buffer's busiest step.
    std::vector<std::uint32_t> points(p.first.begin(), p.first.end());
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    const std::size_t m = points.size();
    std::vector<std::int64_t> delta(m + 1, 0);
    auto point_of = [&](std::uint32_t step) {
      return static_cast<std::size_t>(std::lower_bound(points.begin(), points.end(), step) - points.begin());
    };
    auto end_of = [&](std::uint32_t last) {  // one past the last point at or before `last`
      return static_cast<std::size_t>(std::upper_bound(points.begin(), points.end(), last) - points.begin());
    };
    for (std::uint32_t i = 0; i < p.ids.size(); ++i) {
      delta[point_of(p.first[i])] += static_cast<std::int64_t>(p.size[i]);
      delta[end_of(p.last[i])] -= static_cast<std::int64_t>(p.size[i]);
    }
    std::vector<std::uint32_t> by_breadth(m);
    std::vector<std::int64_t> breadth(m);
    std::int64_t live = 0;
    for (std::size_t k = 0; k < m; ++k) breadth[k] = live += delta[k];
    std::iota(by_breadth.begin(), by_breadth.end(), 0U);
    std::stable_sort(by_breadth.begin(), by_breadth.end(), [&](auto a, auto b) { return breadth[a] > breadth[b]; });
    std::vector<std::uint32_t> rank(m);
    for (std::uint32_t r = 0; r < m; ++r) rank[by_breadth[r]] = r;
    std::vector<std::vector<std::uint32_t>> table{rank};  // table[j][k]: least rank in [k, k + 2^j)
    for (std::size_t j = 1; (std::size_t{1} << j) <= m; ++j) {
      const std::vector<std::uint32_t>& prev = table[j - 1];
      std::vector<std::uint32_t> row(m - (std::size_t{1} << j) + 1);
      for (std::size_t k = 0; k < row.size(); ++k) row[k] = std::min(prev[k], prev[k + (std::size_t{1} << (j - 1))]);
      table.push_back(std::move(row));
    }
    std::vector<std::uint32_t> key(p.ids.size());
    for (std::uint32_t i = 0; i < p.ids.size(); ++i) {
      const std::size_t lo = point_of(p.first[i]), hi = end_of(p.last[i]);
      std::size_t j = 0;
      while ((std::size_t{2} << j) <= hi - lo) ++j;
      key[i] = std::min(table[j][lo], table[j][hi - (std::size_t{1} << j)]);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](auto a, auto b) { return key[a] != key[b] ? key[a] < key[b] : p.size[a] > p.size[b]; });
  }
  return order;
}

/// Local search from a greedy plan: moves a buffer that reaches the arena's top to the front of
/// the placement order and places all again, keeping the new order when the arena shrinks or as
/// many bytes reach it from fewer buffers (a model's repeated blocks each put one there); stops
/// when no top buffer helps or after `max_placements`.
Result<std::uint64_t> refine(const Problem& p, std::vector<std::uint32_t> order, std::uint64_t arena,
                             std::uint64_t lower_bound, std::vector<std::uint64_t>& offsets,
                             const std::function<Status(double)>& poll, int max_placements) {
  auto tops_of = [&](const std::vector<std::uint64_t>& at, std::uint64_t top) {
    std::vector<std::uint32_t> tops;  // in placement order
    for (std::uint32_t i : order)
      if (at[i] + p.size[i] == top) tops.push_back(i);
    return tops;
  };
  int placements = 0;
  std::vector<std::uint32_t> tops = tops_of(offsets, arena);
  while (arena > lower_bound && placements < max_placements) {
    bool improved = false;
    for (std::size_t k = 0; k < tops.size() && k < 4 && placements < max_placements; ++k) {
      std::vector<std::uint32_t> candidate = order;
      candidate.erase(std::find(candidate.begin(), candidate.end(), tops[k]));
      candidate.insert(candidate.begin(), tops[k]);
      std::uint64_t a = 0;
      Result<std::vector<std::uint64_t>> placed = place_in_order(p, candidate, a, poll);
      if (!placed) return placed.status();
      ++placements;
      if (a > arena) continue;
      std::swap(order, candidate);  // tops_of reads the order
      std::vector<std::uint32_t> now = tops_of(*placed, a);
      if (a < arena || now.size() < tops.size()) {
        arena = a;
        offsets = std::move(placed).value();
        tops = std::move(now);
        improved = true;
        break;
      }
      std::swap(order, candidate);
    }
    if (!improved) break;
  }
  return arena;
}

/// Branch and bound over the order buffers are placed in, each on top of the placed buffers it
/// conflicts with. Listing an optimal plan's buffers by offset gives an order that places every
/// buffer at or below its optimal offset, so searching all orders is exact. Two consecutive
/// buffers that do not conflict give the same plan in either order: only ascending is tried.
class ExactSearch {
 public:
  ExactSearch(const Problem& p, std::uint64_t lower_bound, const PlanOptions& o)
      : p_(p),
        n_(p.ids.size()),
        lower_bound_(lower_bound),
        max_steps_(o.exact_max_steps),
        poll_(o.poll),
        deadline_(Clock::now() + std::chrono::microseconds(static_cast<std::int64_t>(o.exact_time_limit_ms * 1000))) {
    conflict_.assign(n_, 0);
    for (std::size_t i = 0; i < n_; ++i)
      for (std::uint32_t c : p.conflicts[i]) conflict_[i] |= std::uint64_t{1} << c;
    std::vector<std::uint32_t> points(p.first.begin(), p.first.end());
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    for (std::uint32_t step : points) {
      std::uint64_t mask = 0;
      for (std::size_t i = 0; i < n_; ++i)
        if (p.first[i] <= step && step <= p.last[i]) mask |= std::uint64_t{1} << i;
      live_at_.push_back(mask);
    }
    offset_.assign(n_, 0);
  }

  /// Improves on `arena`/`offsets` (a heuristic's plan) if it can; returns whether the search
  /// finished (the result is then least possible), or the poll's error.
  Result<bool> run(std::uint64_t& arena, std::vector<std::uint64_t>& offsets) {
    best_ = arena;
    best_offsets_ = offsets;
    if (best_ > lower_bound_) search(0, -1, 0);
    if (!status_) return status_;
    arena = best_;
    offsets = best_offsets_;
    return !stopped_;
  }

 private:
  std::uint64_t top_of(std::uint64_t placed_mask) const {
    std::uint64_t top = 0;
    for (std::uint64_t m = placed_mask; m != 0; m &= m - 1) {
      const auto i = static_cast<std::size_t>(__builtin_ctzll(m));
      top = std::max(top, offset_[i] + p_.size[i]);
    }
    return top;
  }

  void search(std::uint64_t placed, int prev, std::uint64_t arena) {
    if (stopped_ || best_ == lower_bound_) return;
    if (++visited_ > max_steps_) {
      stopped_ = true;
      return;
    }
    if ((visited_ & 1023U) == 0) {
      if (poll_) status_ = poll_(static_cast<double>(1024 * n_));
      if (!status_ || Clock::now() > deadline_) {
        stopped_ = true;
        return;
      }
    }
    const std::uint64_t all = n_ == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n_) - 1;
    if (placed == all) {
      if (arena < best_) {
        best_ = arena;
        best_offsets_ = offset_;
      }
      return;
    }
    std::uint64_t bound = arena;
    for (std::uint64_t live : live_at_) {
      std::uint64_t rest = 0;
      for (std::uint64_t m = live & ~placed; m != 0; m &= m - 1)
        rest += p_.size[static_cast<std::size_t>(__builtin_ctzll(m))];
      bound = std::max(bound, top_of(live & placed) + rest);
    }
    if (bound >= best_) return;
    std::vector<std::pair<std::uint64_t, std::uint32_t>> next;  // (offset, buffer)
    for (std::uint32_t i = 0; i < n_; ++i) {
      if ((placed >> i & 1U) != 0) continue;
      if (prev >= 0 && i < static_cast<std::uint32_t>(prev) &&
          (conflict_[static_cast<std::size_t>(prev)] >> i & 1U) == 0)
        continue;
      next.emplace_back(top_of(placed & conflict_[i]), i);
    }
    std::sort(next.begin(), next.end(), [&](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : p_.size[a.second] > p_.size[b.second];
    });
    for (const auto& [at, i] : next) {
      if (at + p_.size[i] >= best_) continue;
      offset_[i] = at;
      search(placed | std::uint64_t{1} << i, static_cast<int>(i), std::max(arena, at + p_.size[i]));
    }
  }

  const Problem& p_;
  std::size_t n_;
  std::uint64_t lower_bound_;
  std::uint64_t max_steps_;
  const std::function<Status(double)>& poll_;
  Clock::time_point deadline_;
  std::vector<std::uint64_t> conflict_, live_at_, offset_, best_offsets_;
  std::uint64_t best_ = 0;
  std::uint64_t visited_ = 0;
  bool stopped_ = false;
  Status status_ = Status::ok();
};

constexpr std::size_t kExactLimit = 64;  // buffers: the search keeps sets as 64-bit masks
constexpr std::size_t kRefineLimit = 4096;  // buffers: best refines smaller problems only (time)
constexpr int kRefinePlacements = 64;

}  // namespace

std::string_view planner_name(Planner p) {
  switch (p) {
    case Planner::GreedyBySize: return "size";
    case Planner::GreedyByBreadth: return "breadth";
    case Planner::GreedyByLifetime: return "lifetime";
    case Planner::Refine: return "refine";
    case Planner::Exact: return "exact";
    case Planner::Best: return "best";
  }
  return "?";
}

Result<Planner> parse_planner(std::string_view name) {
  for (Planner p : {Planner::GreedyBySize, Planner::GreedyByBreadth, Planner::GreedyByLifetime, Planner::Refine,
                    Planner::Exact, Planner::Best})
    if (planner_name(p) == name) return p;
  return Status::error(fmt::format("unknown planner '{}' (size, breadth, lifetime, refine, exact or best)", name));
}

Status check_alignment(std::uint64_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    return Status::error(fmt::format("alignment {} is not a power of two", alignment));
  if (alignment > (std::uint64_t{1} << 30)) return Status::error(fmt::format("alignment {} is above 1 GiB", alignment));
  return Status::ok();
}

Result<MemoryPlan> plan_memory(const Liveness& l, const PlanOptions& o) {
  if (Status s = check_alignment(o.alignment); !s) return s;
  for (std::size_t b = 0; b < l.buffers.size(); ++b)  // a Liveness made by hand may be anything
    if (const Buffer& buf = l.buffers[b]; buf.planned && (buf.first > buf.last || buf.last >= l.steps.size()))
      return Status::error(fmt::format("buffer {}: its live range, steps {} to {}, is not within the {} steps", b,
                                       buf.first, buf.last, l.steps.size()));
  const Problem p = make_problem(l, o.alignment);
  MemoryPlan plan;
  plan.alignment = o.alignment;
  const LivePeak peak = live_peak(l, o.alignment);
  plan.lower_bound = peak.bytes;
  plan.peak_step = peak.step;
  if (o.planner == Planner::Exact && p.ids.size() > kExactLimit)
    return Status::error(fmt::format("the exact planner takes at most {} buffers; this graph plans {} (use 'best')",
                                     kExactLimit, p.ids.size()));
  std::vector<Planner> planners;
  if (o.planner == Planner::Best) {
    planners = {Planner::GreedyBySize, Planner::GreedyByBreadth, Planner::GreedyByLifetime};
    if (p.ids.size() <= kRefineLimit) planners.push_back(Planner::Refine);
    if (p.ids.size() <= std::min(o.exact_max_buffers, kExactLimit)) planners.push_back(Planner::Exact);
  } else if (o.planner == Planner::Refine) {
    planners = {Planner::GreedyBySize, Planner::Refine};  // refine starts from size's order
  } else {
    planners = {o.planner};
  }
  std::vector<std::uint64_t> best;
  std::vector<std::uint32_t> best_order;
  std::uint64_t best_arena = kNotPlanned;
  for (Planner planner : planners) {
    if (planner == Planner::Refine && (best.empty() || best_arena == plan.lower_bound)) continue;
    const Clock::time_point start = Clock::now();
    PlannerRun run{planner};
    std::vector<std::uint64_t> offsets;
    if (planner == Planner::Exact) {
      std::uint64_t arena = best_arena;  // seeded with the best greedy plan (or one of its own)
      offsets = best;
      if (best.empty()) {
        Result<std::vector<std::uint64_t>> seed = place_in_order(p, order_by(p, Planner::GreedyBySize), arena, o.poll);
        if (!seed) return seed.status();
        offsets = std::move(seed).value();
      }
      Result<bool> finished = ExactSearch(p, plan.lower_bound, o).run(arena, offsets);
      if (!finished) return finished.status();
      run.proved_optimal = *finished;
      run.arena = arena;
    } else if (planner == Planner::Refine) {
      run.arena = best_arena;
      offsets = best;
      Result<std::uint64_t> refined =
          refine(p, best_order, best_arena, plan.lower_bound, offsets, o.poll, kRefinePlacements);
      if (!refined) return refined.status();
      run.arena = *refined;
    } else {
      std::vector<std::uint32_t> order = order_by(p, planner);
      Result<std::vector<std::uint64_t>> placed = place_in_order(p, order, run.arena, o.poll);
      if (!placed) return placed.status();
      offsets = std::move(placed).value();
      if (run.arena < best_arena || best.empty()) best_order = std::move(order);
    }
    run.milliseconds = since_ms(start);
    if (run.arena < best_arena || best.empty()) {
      best_arena = run.arena;
      best = std::move(offsets);
      plan.planner = planner;
    }
    plan.optimal = plan.optimal || run.proved_optimal;
    plan.runs.push_back(run);
  }
  plan.arena = best.empty() ? 0 : best_arena;
  plan.optimal = plan.optimal || plan.arena == plan.lower_bound;
  plan.offsets.assign(l.buffers.size(), kNotPlanned);
  for (std::uint32_t b = 0; b < l.buffers.size(); ++b)
    if (l.buffers[b].planned) plan.offsets[b] = 0;  // empty buffers: anywhere
  for (std::size_t i = 0; i < p.ids.size(); ++i) plan.offsets[p.ids[i]] = best[i];
  return plan;
}

Status check_plan(const Graph& g, const Liveness& l, const MemoryPlan& plan) {
  auto name = [&](std::uint32_t b) {
    const Buffer& buf = l.buffers[b];
    const std::string node = g.is_alive(buf.node) ? g.name(buf.node) : std::string("?");
    return buf.element == 0 ? node : fmt::format("{}[{}]", node, buf.element);
  };
  if (plan.offsets.size() != l.buffers.size())
    return Status::error(fmt::format("the plan has {} offsets for {} buffers", plan.offsets.size(), l.buffers.size()));
  std::vector<std::uint32_t> ids;
  for (std::uint32_t b = 0; b < l.buffers.size(); ++b) {
    const Buffer& buf = l.buffers[b];
    const std::uint64_t at = plan.offsets[b];
    if (!buf.planned) {
      if (at != kNotPlanned) return Status::node_error(name(b), "is not planned but has an offset");
      continue;
    }
    if (at == kNotPlanned) return Status::node_error(name(b), "is planned but has no offset");
    if (buf.bytes == 0) continue;
    if (plan.alignment == 0 || at % plan.alignment != 0)
      return Status::node_error(name(b), fmt::format("offset {} is not a multiple of {}", at, plan.alignment));
    if (at + buf.bytes > plan.arena)
      return Status::node_error(name(b),
                                fmt::format("ends at {}, past the arena's {} bytes", at + buf.bytes, plan.arena));
    ids.push_back(b);
  }
  // Sweep the steps; the buffers live now, by offset, must not overlap their neighbours.
  std::stable_sort(ids.begin(), ids.end(), [&](auto a, auto b) { return l.buffers[a].first < l.buffers[b].first; });
  using Ending = std::pair<std::uint32_t, std::uint32_t>;  // (last step, buffer)
  std::priority_queue<Ending, std::vector<Ending>, std::greater<>> ending;
  std::map<std::uint64_t, std::uint32_t> live;  // offset -> buffer
  for (std::uint32_t b : ids) {
    const Buffer& buf = l.buffers[b];
    while (!ending.empty() && ending.top().first < buf.first) {
      live.erase(plan.offsets[ending.top().second]);
      ending.pop();
    }
    const std::uint64_t at = plan.offsets[b];
    auto after = live.lower_bound(at);
    auto clash = [&](std::uint32_t other) {
      return Status::error(
          fmt::format("'{}' ({} bytes at {}) and '{}' ({} bytes at {}) are both live at step {} and "
                      "overlap in the arena",
                      name(other), l.buffers[other].bytes, plan.offsets[other], name(b), buf.bytes, at,
                      std::max(buf.first, l.buffers[other].first)));
    };
    if (after != live.end() && after->first < at + buf.bytes) return clash(after->second);
    if (after != live.begin()) {
      auto before = std::prev(after);
      if (before->first + l.buffers[before->second].bytes > at) return clash(before->second);
    }
    live.emplace(at, b);
    ending.emplace(buf.last, b);
  }
  return Status::ok();
}

std::vector<std::uint32_t> buffers_live_at(const Liveness& l, std::uint32_t step) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t b = 0; b < l.buffers.size(); ++b) {
    const Buffer& buf = l.buffers[b];
    if (buf.planned && buf.bytes > 0 && buf.first <= step && step <= buf.last) out.push_back(b);
  }
  std::stable_sort(out.begin(), out.end(), [&](auto a, auto b) { return l.buffers[a].bytes > l.buffers[b].bytes; });
  return out;
}

}  // namespace graft
