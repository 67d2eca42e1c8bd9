// The timing every benchmark here reports: the best of several runs, on the steady clock.
#pragma once

#include <algorithm>
#include <chrono>
#include <limits>

namespace graft::bench {

/// The shortest of `runs` runs of `f`, in seconds.
template <class F>
double best_of(int runs, F&& f) {
  double best = std::numeric_limits<double>::infinity();
  for (int run = 0; run < runs; ++run) {
    const auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace graft::bench
