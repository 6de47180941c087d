#pragma once
// Gathering an outer step's batches for CA-SGD's Gram: each entry rounded to the Gram's input
// format and stored as its container type.
#include <cstdint>
#include <type_traits>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/simd/tier.hpp"
#include "minisgd/kernels/host/host_kernels.hpp"
#include "minisgd/precision/rounder.hpp"

namespace minisgd {

/// First local row of each batch of an outer step.
using BatchRows = Kokkos::View<std::int64_t*, MemSpace>;

/// Y(q, c) = X(row q of the stacked batches, c), rounded to the Gram input format (random
/// bits keyed by step and the entry) and stored as In. When that rounding is just the cast
/// to In (round to nearest into In's own format), on host backends a batch (b contiguous rows)
/// is one work item and one vectorized run (the active tier's cast kernel); on devices an
/// entry is one.
template <class S, class In, class Round>
void gather_batches(const Matrix<S>& X, const BatchRows& first, std::int64_t b, const Round& round,
                    std::uint64_t step, const Matrix<In>& Y) {
  const std::int64_t n = X.extent(1), total = std::int64_t(Y.extent(0)) * n;
  constexpr bool cast = std::is_same_v<Round, precision::Exact> ||
                        std::is_same_v<Round, precision::RoundTo<In, false>>;
  if constexpr (cast && Kokkos::SpaceAccessibility<HostSpace, MemSpace>::accessible) {
    // A work item is a batch: one run of b·n values when rows are stored without padding.
    const std::int64_t stride = X.stride(0), out = Y.stride(0);
    const bool runs = stride == n && out == n;
    const auto cast_run = host::cast_kernel<S, In>(simd::active_tier());
    Kokkos::parallel_for("minisgd::gather_batches",
                         Kokkos::RangePolicy<ExecSpace>(0, Y.extent(0) / b),
                         [=](const std::int64_t j) {
                           const S* const x = X.data() + first(j) * stride;
                           In* const y = Y.data() + j * b * out;
                           if (runs) return cast_run(x, y, b * n);
                           for (std::int64_t l = 0; l < b; ++l)
                             cast_run(x + l * stride, y + l * out, n);
                         });
  } else if constexpr (cast) {
    // A thread per entry, consecutive threads along a row: coalesced loads and stores (a thread
    // per row reads with a stride of a row, and took many times the Gram it feeds).
    Kokkos::parallel_for(
        "minisgd::gather_batches", Kokkos::RangePolicy<ExecSpace>(0, total),
        KOKKOS_LAMBDA(const std::int64_t e) {
          const std::int64_t q = e / n, c = e % n;
          Y(q, c) = precision::convert<In>(X(first(q / b) + q % b, c));
        });
  } else {
    Kokkos::parallel_for(
        "minisgd::gather_batches_rounded", Kokkos::RangePolicy<ExecSpace>(0, total),
        KOKKOS_LAMBDA(const std::int64_t e) {
          const std::int64_t q = e / n, c = e % n;
          Y(q, c) = precision::round_into<In>(round, X(first(q / b) + q % b, c), step, e);
        });
  }
}

namespace gather_rounding {
template <class Round, class... T>
constexpr bool rounds_to_one_of = (std::is_same_v<Round, precision::RoundTo<T, false>> || ...) ||
                                  (std::is_same_v<Round, precision::RoundTo<T, true>> || ...);

/// True when values rounded by Round (from fp64) are kept in In: In is precision::container of
/// Round's format. The other combinations never occur; gather_batches sends them through the
/// run-time Rounder instead of instantiating a kernel for each.
template <class Round, class In>
constexpr bool gathers_into() {
  using namespace precision;
  if constexpr (std::is_same_v<Round, Exact>) return std::is_same_v<In, double>;
  if constexpr (std::is_same_v<In, bf16>)
    return rounds_to_one_of<Round, bf16, fp8_e4m3, fp8_e5m2, CustomFormat>;
  if constexpr (std::is_same_v<In, float>) return rounds_to_one_of<Round, float, CustomFormat>;
  return rounds_to_one_of<Round, In>;
}
}  // namespace gather_rounding

template <class S, class In>
void gather_batches(const Matrix<S>& X, const BatchRows& first, std::int64_t b,
                    const precision::Rounder& round, std::uint64_t step, const Matrix<In>& Y) {
  precision::with_rounding<double>(round, [&](const auto& typed) {
    if constexpr (gather_rounding::gathers_into<std::decay_t<decltype(typed)>, In>())
      gather_batches(X, first, b, typed, step, Y);
    else
      gather_batches<S, In, precision::Rounder>(X, first, b, round, step, Y);
  });
}

}  // namespace minisgd
