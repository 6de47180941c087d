#pragma once
// The margin's and the gradient's sums in their defining order, one row at a time: what every
// other form of them (the host tiers' vector loops, the device kernels' teams, the sparse
// kernels) adds up to bit for bit, and what the tests compare them with.
#include "minisgd/core/kokkos.hpp"
#include "minisgd/kernels/tuning.hpp"
#include "minisgd/precision/storage_types.hpp"

namespace minisgd {

/// Σ_c x[c]·w[c] in A, in kMarginPartialSums interleaved partial sums added pairwise in a
/// fixed tree: the margin's order everywhere (the device's team reduction aside).
template <class A, class S>
KOKKOS_INLINE_FUNCTION A row_dot(const S* x, const A* w, int n) {
  constexpr int kLanes = kMarginPartialSums;
  A part[kLanes] = {};
  int c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (int l = 0; l < kLanes; ++l) part[l] += precision::convert<A>(x[c + l]) * w[c + l];
  for (int l = 0; c + l < n; ++l) part[l] += precision::convert<A>(x[c + l]) * w[c + l];
  for (int half = kLanes / 2; half > 0; half /= 2)  // a fixed tree: short dependency chains
    for (int l = 0; l < half; ++l) part[l] += part[l + half];
  return part[0];
}

/// g[c] += x[c]·u for c < n: the one expression every gradient path uses.
template <class A, class S>
KOKKOS_INLINE_FUNCTION void add_row(const S* x, A u, A* g, int n) {
  for (int c = 0; c < n; ++c) g[c] += precision::convert<A>(x[c]) * u;
}

}  // namespace minisgd
