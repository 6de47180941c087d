#pragma once
// The objective's kernels (solvers/evaluator.cpp): FP64 margins of dense rows and the sum of
// the loss terms, every sum in an order fixed by the data alone (a margin in SGD's margin
// order, row_dot.hpp; the terms in ordered_sum's order), so F(w) is bitwise the same for any
// thread count and any vector tier.
#include <cstdint>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/ordered_sum.hpp"
#include "minisgd/core/simd/tier.hpp"
#include "minisgd/kernels/host/host_kernels.hpp"
#include "minisgd/kernels/row_dot.hpp"
#include "minisgd/kernels/tuning.hpp"
#include "minisgd/models/loss.hpp"

namespace minisgd {

/// z(i) = x_{first+i}·w in FP64 for i < z.extent(0): on host backends the margins loops of
/// SGD's step over blocks of kObjectiveItemRows rows (one chain of additions per row ran at the
/// latency of an addition, and the evaluation took several times an epoch's training); on
/// devices row_dot a row per thread.
template <class T>
void objective_margins(const Matrix<T>& X, std::int64_t first, const Vector<double>& w,
                       const Vector<double>& z) {
  const int cols = int(X.extent(1));
  const std::int64_t rows = z.extent(0);
  if constexpr (kHostMemory) {
    const auto margins = host::row_kernels<T, double>(simd::active_tier()).margins;
    const T* const x = X.data() + first * cols;
    constexpr std::int64_t kRows = kObjectiveItemRows;
    Kokkos::parallel_for(
        "minisgd::eval_margins", Kokkos::RangePolicy<ExecSpace>(0, (rows + kRows - 1) / kRows),
        [=](const std::int64_t k) {
          const std::int64_t r0 = k * kRows;
          margins(x + r0 * cols, cols, w.data(), cols, kmin(kRows, rows - r0), z.data() + r0);
        });
  } else {
    Kokkos::parallel_for(
        "minisgd::eval_margins", Kokkos::RangePolicy<ExecSpace>(0, rows),
        KOKKOS_LAMBDA(const std::int64_t i) { z(i) = row_dot(&X(first + i, 0), w.data(), cols); });
  }
}

/// ℓ(z_i; y_{first+i}) written over z_i for i < n, kObjectiveLossValues at a time, on host
/// backends (a template, so that a device build never instantiates its host loop).
template <Loss L>
void host_loss_terms(const Vector<double>& z, const Vector<double>& y, std::int64_t first,
                     std::int64_t n) {
  if constexpr (kHostMemory) {
    const auto values = host::loss_values_kernel<L>(simd::active_tier());
    constexpr std::int64_t kBlock = kObjectiveLossValues;
    Kokkos::parallel_for("minisgd::eval_loss_terms",
                         Kokkos::RangePolicy<ExecSpace>(0, (n + kBlock - 1) / kBlock),
                         [=](const std::int64_t b) {
                           values(z.data() + b * kBlock, y.data() + first + b * kBlock,
                                  kmin(kBlock, n - b * kBlock));
                         });
  }
}

/// Σ_i ℓ(z_i; y_{first+i}) for i < n in ordered_sum's order; on host backends the terms are
/// first written over z (host_loss_terms), then summed: the same terms in the same order.
inline double loss_terms_sum(Loss loss, const Vector<double>& z, const Vector<double>& y,
                             std::int64_t first, std::int64_t n) {
  if constexpr (kHostMemory) {
    with_loss(loss, [&](auto l) { host_loss_terms<decltype(l)::value>(z, y, first, n); });
    return ordered_sum(
        "minisgd::eval_loss", n, KOKKOS_LAMBDA(const std::int64_t i) { return z(i); });
  } else {
    return ordered_sum(
        "minisgd::eval_loss", n, KOKKOS_LAMBDA(const std::int64_t i) {
          return loss_value<double>(loss, z(i), y(first + i));
        });
  }
}

}  // namespace minisgd
