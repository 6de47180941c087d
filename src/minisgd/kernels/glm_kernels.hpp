#pragma once
// Kernels of one SGD step and of the objective. A batch is a contiguous block of rows of the
// row-major local matrix, so every kernel works on a subview without gathering.
#include <KokkosBlas1_axpby.hpp>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/vocabulary.hpp"
#include "minisgd/models/loss.hpp"
#include "minisgd/precision/storage_types.hpp"

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

/// Σ_i ℓ(x_i·w; y_i) over the rows of X in FP64, whatever T is (bf16 too).
template <Loss L, class T, class YView>
double loss_sum_of(const Matrix<T>& X, const YView& y, const Vector<double>& w) {
  using Team = Kokkos::TeamPolicy<ExecSpace>::member_type;
  double total = 0;
  const int cols = static_cast<int>(X.extent(1));
  Kokkos::parallel_reduce(
      "minisgd::loss_sum", Kokkos::TeamPolicy<ExecSpace>(X.extent(0), Kokkos::AUTO),
      KOKKOS_LAMBDA(const Team& team, double& acc) {
        const std::int64_t i = team.league_rank();
        double z = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, cols),
            [&](const int j, double& s) { s += precision::to_double(X(i, j)) * w(j); }, z);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { acc += loss_value<L>(z, double(y(i))); });
      },
      total);
  return total;
}

template <class T, class YView>
double loss_sum(Loss loss, const Matrix<T>& X, const YView& y, const Vector<double>& w) {
  return with_loss(loss, [&](auto l) { return loss_sum_of<decltype(l)::value>(X, y, w); });
}

/// z_i = Σ_j X(i,j)·w(j) in FP64 (the partial margins of the column decomposition).
template <class T>
void margins_fp64(const Matrix<T>& X, const Vector<double>& w, const Vector<double>& z) {
  using Team = Kokkos::TeamPolicy<ExecSpace>::member_type;
  const int cols = static_cast<int>(X.extent(1));
  Kokkos::parallel_for(
      "minisgd::margins_fp64", Kokkos::TeamPolicy<ExecSpace>(X.extent(0), Kokkos::AUTO),
      KOKKOS_LAMBDA(const Team& team) {
        const std::int64_t i = team.league_rank();
        double s = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, cols),
            [&](const int j, double& acc) { acc += precision::to_double(X(i, j)) * w(j); }, s);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { z(i) = s; });
      });
}

/// Σ_i ℓ(z_i; y_i) for precomputed margins.
template <Loss L, class YView>
double loss_sum_of_margins_of(const Vector<double>& z, const YView& y) {
  double total = 0;
  Kokkos::parallel_reduce(
      "minisgd::loss_sum_of_margins", Kokkos::RangePolicy<ExecSpace>(0, z.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i, double& acc) {
        acc += loss_value<L>(z(i), double(y(i)));
      },
      total);
  return total;
}

template <class YView>
double loss_sum_of_margins(Loss loss, const Vector<double>& z, const YView& y) {
  return with_loss(loss, [&](auto l) { return loss_sum_of_margins_of<decltype(l)::value>(z, y); });
}

}  // namespace minisgd
