#pragma once
// Small kernels of an SGD step: row blocks, conversions, the weight update. A batch is a
// contiguous block of rows of the row-major local matrix, so a kernel works on a subview without
// gathering.
#include <KokkosBlas1_axpby.hpp>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/vocabulary.hpp"

namespace minisgd {

template <class T>
Matrix<T> row_block(const Matrix<T>& X, std::int64_t first, std::int64_t count) {
  return Kokkos::subview(X, Kokkos::make_pair(first, first + count), Kokkos::ALL());
}

template <class V>
auto range(const V& v, std::int64_t first, std::int64_t count) {
  return Kokkos::subview(v, Kokkos::make_pair(first, first + count));
}

/// dst(i) = src(i) converted to dst's type (deep_copy requires equal value types).
template <class Src, class Dst>
void convert_copy(const Src& src, const Dst& dst) {
  using D = typename Dst::non_const_value_type;
  Kokkos::parallel_for(
      "minisgd::convert_copy", Kokkos::RangePolicy<ExecSpace>(0, src.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i) { dst(i) = D(src(i)); });
}

/// w = ρ·w − (η/b)·g: each entry two products and one sum, the same bits on every path.
template <class T>
void sgd_update(const Vector<T>& w, const Vector<T>& g, T rho, T step_over_b) {
  if constexpr (kHostMemory) {  // short vectors: no launch (on_calling_thread)
    if (on_calling_thread(3 * std::int64_t(w.extent(0) * sizeof(T)))) {
      T* const wd = w.data();
      const T* const gd = g.data();
      for (std::int64_t i = 0; i < std::int64_t(w.extent(0)); ++i)
        wd[i] = rho * wd[i] - step_over_b * gd[i];
      return;
    }
  }
  KokkosBlas::axpby(-step_over_b, g, rho, w);
}

}  // namespace minisgd
