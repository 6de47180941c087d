#pragma once
// The kernels of a CA-SGD outer step on a sparse share (data.layout: sparse; docs/ca_sgd.md,
// "Sparse shares"): the dense kernels' steps (kernels/ca_sgd_kernels.hpp) with X in CSR. The
// packed message, the recurrence and apply_gradient are the dense ones; what reads X is here:
//
// - gather_csr_batches: the s·b rows of the outer step copied into one small CSR, each value
//   rounded to the Gram input format as gather_batches rounds it (the same random bits: keyed
//   by the row's place q in the stack and the column, q·n + c), kept in A;
// - csr_gram: each entry of the strictly block-lower Gram a dot product of two sparse rows,
//   their sorted column lists merged, the products of common columns summed in column order
//   (the order does not depend on the thread count: a fixed summation);
// - csr_partial_margins: SGD's sparse margins (csr_row_dot), so at s = 1 they are SGD's;
// - csr_gradient_product: g = Σ_q X(row q)·v(q), the rows in order, each value's product added
//   into g (exact in A, or rounded after every operation as the dense emulated path rounds).
// A sparse row's missing entries are zeros, which add nothing to any of these sums, so every
// rounding rule gives the dense kernels' values up to the order of the additions.
#include <cstdint>
#include <type_traits>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/data/dataset.hpp"
#include "minisgd/kernels/ca_sgd_kernels.hpp"
#include "minisgd/kernels/gram/gram.hpp"
#include "minisgd/kernels/sparse_kernels.hpp"
#include "minisgd/precision/rounder.hpp"

namespace minisgd {

/// The s·b rows of an outer step gathered for the Gram: row q (batch q / b, row q mod b of
/// it) at values[row_map(q) .. row_map(q + 1)), columns in increasing order, values rounded
/// to the Gram input format and held in A.
template <class A>
struct GatheredRows {
  Kokkos::View<std::int64_t*, MemSpace> row_map;
  Kokkos::View<std::int32_t*, MemSpace> entries;
  Vector<A> values;
  GatheredRows() = default;
  /// Room for `rows` rows of at most `longest` entries each.
  GatheredRows(std::int64_t rows, std::int64_t longest)
      : row_map("gathered_row_map", rows + 1),
        entries("gathered_entries", rows * longest),
        values("gathered_values", rows * longest) {}
};

namespace ca_detail {
/// The value precision::round_into rounds: a double as it is, any other type as a float.
template <class S>
KOKKOS_INLINE_FUNCTION auto rounding_input(S x) {
  if constexpr (std::is_same_v<S, double>)
    return x;
  else
    return precision::to_float(x);
}
}  // namespace ca_detail

/// out ← the `steps`·b rows of the outer step (batch j's first local row first(j)), each
/// value x in column c of stacked row q rounded as gather_batches rounds the dense entry
/// (`round` relative to fp64, bits keyed by (step, q·n + c)), then held in A (exact: the
/// Gram input format's container widens into the accumulator). n: the share's columns.
template <class S, class A>
void gather_csr_batches(const SparseRows<S>& X, const BatchRows& first, std::int64_t b, int steps,
                        const precision::Rounder& round, std::uint64_t step, std::int64_t n,
                        const GatheredRows<A>& out) {
  const std::int64_t rows = steps * b;
  const auto row_map = out.row_map;
  const auto entries = out.entries;
  const auto values = out.values;
  Kokkos::parallel_scan(
      "minisgd::gather_csr_offsets", Kokkos::RangePolicy<ExecSpace>(0, rows + 1),
      KOKKOS_LAMBDA(const std::int64_t q, std::int64_t& at, const bool final) {
        if (final) row_map(q) = at;
        if (q < rows) {
          const std::int64_t row = first(q / b) + q % b;
          at += X.row_map(row + 1) - X.row_map(row);
        }
      });
  const precision::Rounder r = round;
  Kokkos::parallel_for(
      "minisgd::gather_csr_batches", Kokkos::RangePolicy<ExecSpace>(0, rows),
      KOKKOS_LAMBDA(const std::int64_t q) {
        const std::int64_t row = first(q / b) + q % b, from = X.row_map(row);
        const std::int64_t to = row_map(q), count = X.row_map(row + 1) - from;
        for (std::int64_t k = 0; k < count; ++k) {
          const std::int32_t c = X.entries(from + k);
          const S x = X.values(from + k);
          const auto key = std::uint64_t(q * n + c);
          entries(to + k) = c;
          values(to + k) = precision::convert<A>(r(ca_detail::rounding_input(x), step, key));
        }
      });
}

/// Σ over the columns two gathered rows share of the products of their values, in column
/// order, each addition rounded by `round` (precision::Exact: none): the dense team kernel's
/// chain for that entry (gram_team), less its additions of zeros.
template <class A, class Round>
KOKKOS_INLINE_FUNCTION A sparse_row_pair_dot(const GatheredRows<A>& Y, std::int64_t p,
                                             std::int64_t q, const Round& round) {
  std::int64_t i = Y.row_map(p), j = Y.row_map(q);
  const std::int64_t i1 = Y.row_map(p + 1), j1 = Y.row_map(q + 1);
  A dot = 0;
  while (i < i1 && j < j1) {
    const std::int32_t ci = Y.entries(i), cj = Y.entries(j);
    if (ci < cj) {
      ++i;
    } else if (cj < ci) {
      ++j;
    } else {
      dot = round(dot + Y.values(i) * Y.values(j));
      ++i;
      ++j;
    }
  }
  return dot;
}

/// The packed strictly block-lower Gram of the gathered rows of `steps` batches of b
/// (gram.hpp's layout: block row j at gram_row_offset(j, b), row-major, b × j·b): a team per
/// row of block rows 1.., its threads over the earlier batches' rows.
template <class A, class Round>
void csr_gram(const GatheredRows<A>& Y, std::int64_t b, int steps, const Round& accumulate,
              const Vector<A>& G) {
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
  using Team = typename Policy::member_type;
  if (steps < 2) return;
  const Round round = accumulate;
  Kokkos::parallel_for(
      "minisgd::csr_gram", Policy((steps - 1) * b, Kokkos::AUTO), KOKKOS_LAMBDA(const Team& team) {
        const std::int64_t p = b + team.league_rank(), j = p / b, l = p % b;
        const std::int64_t row = gram_row_offset(j, b) + l * (j * b);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, j * b), [&](const std::int64_t q) {
          G(row + q) = sparse_row_pair_dot(Y, p, q, round);
        });
      });
}

template <class A>
void csr_gram(const GatheredRows<A>& Y, std::int64_t b, int steps,
              const precision::Rounder& accumulate, const Vector<A>& G) {
  precision::with_nearest_rounding<A>(accumulate,
                                      [&](const auto& round) { csr_gram(Y, b, steps, round, G); });
}

/// r(q) = x·w for stacked row q of the outer step: csr_row_dot (SGD's sparse margins) when
/// exact, else one chain per row rounded after every operation, in column order.
template <class S, class A, class Round>
void csr_partial_margins(const SparseRows<S>& X, const BatchRows& first, std::int64_t b,
                         const Vector<A>& w, const Round& accumulate, const Vector<A>& r) {
  const Round round = accumulate;
  constexpr bool exact = std::is_same_v<Round, precision::Exact>;  // (not if constexpr: nvcc)
  Kokkos::parallel_for(
      "minisgd::csr_partial_margins", Kokkos::RangePolicy<ExecSpace>(0, r.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t q) {
        const std::int64_t row = first(q / b) + q % b;
        if (exact) {
          r(q) = csr_row_dot<A>(X, row, w);
        } else {
          A acc = 0;
          for (std::int64_t k = X.row_map(row); k < X.row_map(row + 1); ++k)
            acc = round(acc + round(precision::convert<A>(X.values(k)) * w(X.entries(k))));
          r(q) = acc;
        }
      });
}

template <class S, class A>
void csr_partial_margins(const SparseRows<S>& X, const BatchRows& first, std::int64_t b,
                         const Vector<A>& w, const precision::Rounder& accumulate,
                         const Vector<A>& r) {
  precision::with_nearest_rounding<A>(
      accumulate, [&](const auto& round) { csr_partial_margins(X, first, b, w, round, r); });
}

/// g(c) = Σ_q X(row q, c)·v(q) over the `steps`·b rows of the outer step, g zeroed first
/// (apply_gradient reads all of it). Host backends: the calling thread adds the rows' products
/// in row order (a batch's nonzeros are few); devices: atomic additions when exact (the order
/// is then the device's), one thread in row order when every addition is rounded.
template <class S, class A, class Round>
void csr_gradient_product(const SparseRows<S>& X, const BatchRows& first, std::int64_t b, int steps,
                          const Vector<A>& v, const Round& accumulate, const Vector<A>& g) {
  const Round round = accumulate;
  const std::int64_t rows = steps * b;
  Kokkos::deep_copy(g, A(0));
  const auto add_rows = KOKKOS_LAMBDA(const std::int64_t) {
    for (std::int64_t q = 0; q < rows; ++q) {
      const std::int64_t row = first(q / b) + q % b;
      const A vq = v(q);
      for (std::int64_t k = X.row_map(row); k < X.row_map(row + 1); ++k) {
        const std::int32_t c = X.entries(k);
        g(c) = round(g(c) + round(precision::convert<A>(X.values(k)) * vq));
      }
    }
  };
  // Plain `if`s on constants: nvcc refuses a lambda whose first capture of a variable is
  // inside `if constexpr`; the branches not taken are removed all the same.
  constexpr bool exact = std::is_same_v<Round, precision::Exact>;
  if (kHostMemory) {
    add_rows(0);
  } else if (exact) {
    Kokkos::parallel_for(
        "minisgd::csr_gradient_product", Kokkos::RangePolicy<ExecSpace>(0, rows),
        KOKKOS_LAMBDA(const std::int64_t q) {
          const std::int64_t row = first(q / b) + q % b;
          const A vq = v(q);
          for (std::int64_t k = X.row_map(row); k < X.row_map(row + 1); ++k)
            Kokkos::atomic_add(&g(X.entries(k)), precision::convert<A>(X.values(k)) * vq);
        });
  } else {
    Kokkos::parallel_for("minisgd::csr_gradient_product_rounded",
                         Kokkos::RangePolicy<ExecSpace>(0, 1), add_rows);
  }
}

/// update_weights on a sparse share: w(c) ← c_{s+1}·w(c) − Σ_q X(row q, c)·v(q) through the
/// workspace g, with the plan's roundings for the accumulation and for w.
template <class S, class A>
void csr_update_weights(const SparseRows<S>& X, const BatchRows& first, std::int64_t b, int steps,
                        const Vector<A>& v, double final_scale,
                        const precision::Rounder& accumulate, const precision::Rounder& weights,
                        std::uint64_t step, std::int64_t col0, const Vector<A>& g,
                        const Vector<A>& w) {
  precision::with_nearest_rounding<A>(accumulate, [&](const auto& round) {
    csr_gradient_product(X, first, b, steps, v, round, g);
  });
  precision::with_rounding<A>(
      weights, [&](const auto& round) { apply_gradient(g, final_scale, round, step, col0, w); });
}

}  // namespace minisgd
