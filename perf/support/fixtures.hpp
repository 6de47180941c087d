#pragma once
// What the benchmarks and perf/calibrate share: their inputs and how they time a call.
#include <algorithm>

#include "minisgd/core/kokkos.hpp"
#include "testkit/random_matrix.hpp"

namespace minisgd::perf {

using testkit::random_rows;  // identical inputs in tests and benchmarks

/// The shortest of `reps` fenced calls of f, after one warm-up call, in seconds.
template <class F>
double best_seconds(int reps, F&& f) {
  f();
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    fence();
    Kokkos::Timer t;
    f();
    fence();
    best = std::min(best, t.seconds());
  }
  return best;
}

}  // namespace minisgd::perf
