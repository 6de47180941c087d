#pragma once
// Kernels shared by the sparsifying compressors: error feedback (what was not sent stays in a
// residual and is added to the next gradient) and scattering (index, value) lists.
#include <cmath>
#include <stdexcept>

#include "minisgd/compress/staging.hpp"
#include "minisgd/compress/topk_select.hpp"

namespace minisgd::compress {

/// a = g + r, and r = a: until keep_unsent takes out what was sent, all of a is unsent (one
/// pass, where a copy of a into r after the selection was a second).
template <class T>
void add_residual(const Vector<T>& g, const Vector<T>& r, const Vector<T>& a) {
  Kokkos::parallel_for(
      "minisgd::add_residual", Kokkos::RangePolicy<ExecSpace>(0, a.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i) { r(i) = a(i) = g(i) + r(i); });
}

/// r = a minus the entries sent (their fp32 values, so an fp64 a keeps its rounding error), r
/// holding a since add_residual.
template <class T, class PairView>
void keep_unsent(const Vector<T>& a, const PairView& sent, const Vector<T>& r) {
  Kokkos::parallel_for(
      "minisgd::keep_unsent", Kokkos::RangePolicy<ExecSpace>(0, sent.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t j) {
        const std::int32_t i = sent(j).index;
        r(i) = a(i) - T(sent(j).value);
      });
}

/// out(index) += value for every pair; the indices of one list must be distinct.
template <class PairView, class T>
void scatter_add(const PairView& pairs, const Vector<T>& out) {
  Kokkos::parallel_for(
      "minisgd::scatter_add", Kokkos::RangePolicy<ExecSpace>(0, pairs.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t j) { out(pairs(j).index) += T(pairs(j).value); });
}

/// k = ⌈density·d⌉, at least 1; indices must fit the 32-bit wire index.
inline std::size_t top_k_count(std::size_t d, double density) {
  if (d > std::size_t(INT32_MAX))
    throw std::invalid_argument("top-k indices are 32-bit: d too large");
  const auto k = std::size_t(std::ceil(density * double(d)));
  return k < 1 ? 1 : (k > d ? d : k);
}

/// A local top-k with error feedback: a = g + r, select the k largest |a|, and keep in r what
/// was not sent.
template <class T>
struct ResidualTopK {
  Vector<T> residual, accumulated;
  TopKSelector<T> selector;
  Staged<IndexValue> selection;

  ResidualTopK(std::size_t d, double density)
      : residual("residual", d),
        accumulated("accumulated", d),
        selector(d),
        selection("selection", top_k_count(d, density)) {}
  std::size_t k() const { return selection.size(); }

  /// a = local + r and its top-k by the selection's `form`, sorted by index, on the host (r = a
  /// until keep_unsent, which must follow).
  const IndexValue* select(const Vector<T>& local, Form form) {
    add_residual(local, residual, accumulated);
    selector.select(accumulated, selection.device, form);
    return selection.to_host();
  }
  /// r = a minus the entries of `sent` (device pairs).
  template <class PairView>
  void keep_unsent(const PairView& sent) {
    compress::keep_unsent(accumulated, sent, residual);
  }
};

}  // namespace minisgd::compress
