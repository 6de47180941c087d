#pragma once
// What the benchmarks and perf/calibrate share: their inputs and how they time a call.
#include <algorithm>
#include <cstdint>
#include <random>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/precision/storage_types.hpp"

namespace minisgd::perf {

/// A rows × n matrix of uniform values in [−1, 1) rounded to T, the same values every call
/// (a fixed seed), so runs and machines compare on identical inputs.
template <class T>
Matrix<T> random_rows(std::int64_t rows, std::int64_t n) {
  Matrix<T> Y("Y", rows, n);
  auto h = Kokkos::create_mirror_view(Y);
  std::mt19937 gen(1);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t k = 0; k < n; ++k) h(i, k) = precision::convert<T>(dist(gen));
  Kokkos::deep_copy(Y, h);
  return Y;
}

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
