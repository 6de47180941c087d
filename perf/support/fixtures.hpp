#pragma once
// What the benchmarks and perf/calibrate share: their inputs and how they time a call.
#include <algorithm>
#include <cstdint>

#include "minisgd/core/kokkos.hpp"
#include "support/ceilings.hpp"
#include "testkit/random_matrix.hpp"

namespace minisgd::perf {

using testkit::random_rows;  // identical inputs in tests and benchmarks

/// An uninitialized matrix a benchmark streams, in the pages of bench_huge_pages().
template <class S>
Matrix<S> stream_matrix(const char* label, std::int64_t rows, std::int64_t cols) {
  return stream_view<Matrix<S>>(label, rows, cols);
}

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
