#pragma once
// What the benchmarks and perf/calibrate share: their inputs and how they time a call.
#include <algorithm>

#include "minisgd/core/kokkos.hpp"
#include "testkit/random_matrix.hpp"

namespace minisgd::perf {

using testkit::random_rows;  // identical inputs in tests and benchmarks

/// The shortest of `reps` fenced calls of f, after one warm-up call, in seconds of `now()`.
template <class F, class Clock>
double best_seconds(int reps, F&& f, Clock&& now) {
  f();
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    fence();
    const double t0 = now();
    f();
    fence();
    best = std::min(best, now() - t0);
  }
  return best;
}

/// The same on the wall clock.
template <class F>
double best_seconds(int reps, F&& f) {
  Kokkos::Timer timer;
  return best_seconds(reps, f, [&] { return timer.seconds(); });
}

}  // namespace minisgd::perf
