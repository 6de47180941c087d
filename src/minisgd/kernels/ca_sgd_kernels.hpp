#pragma once
// The kernels of one CA-SGD outer step besides the Gram (docs/design.md): gathering the batches
// for the Gram, the partial margins r = Y w_k, the inner recurrence and the local weight
// update. An outer step's s batches are given by the first local row of each; they need
// not be adjacent. Arithmetic runs in A (double or float); a rounding that is not Exact
// emulates a narrower format by rounding after every operation. Each kernel takes its
// rounding as a template parameter (precision::Exact or RoundTo<T, stochastic>); the overload
// taking the plan's run-time precision::Rounder picks that type once per call.
#include <cstdint>
#include <type_traits>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/vocabulary.hpp"
#include "minisgd/kernels/gram/gram.hpp"
#include "minisgd/models/loss.hpp"
#include "minisgd/precision/rounder.hpp"

namespace minisgd {

/// First local row of each batch of an outer step.
using BatchRows = Kokkos::View<std::int64_t*, MemSpace>;

/// x rounded to nearest even in In: fp32 → bf16 by the bit trick (the exponent range is
/// the same, so subnormals and overflow to inf come out right; NaN stays a quiet NaN of the
/// same sign), every other pair through precision::convert.
template <class In, class S>
KOKKOS_INLINE_FUNCTION In cast_nearest(S x) {
  if constexpr (std::is_same_v<In, precision::bf16> && std::is_same_v<S, float>) {
    const std::uint32_t u = precision::to_bits(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return {std::uint16_t((u >> 16) | 0x40u)};
    return {std::uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16)};
  } else {
    return precision::convert<In>(x);
  }
}

/// Y(q, c) = X(row q of the stacked batches, c), rounded to the Gram input format (random
/// bits keyed by step and the entry) and stored as In. When that rounding is just the cast
/// to In (round to nearest into In's own format), a row is one work item and its columns a
/// loop the compiler vectorizes.
template <class S, class In, class Round>
void gather_batches(const Matrix<S>& X, const BatchRows& first, std::int64_t b, const Round& round,
                    std::uint64_t step, const Matrix<In>& Y) {
  const std::int64_t n = X.extent(1), total = std::int64_t(Y.extent(0)) * n;
  if constexpr (std::is_same_v<Round, precision::Exact> ||
                std::is_same_v<Round, precision::RoundTo<In, false>>) {
    Kokkos::parallel_for(
        "minisgd::gather_batches", Kokkos::RangePolicy<ExecSpace>(0, Y.extent(0)),
        KOKKOS_LAMBDA(const std::int64_t q) {
          const std::int64_t row = first(q / b) + q % b;
          for (std::int64_t c = 0; c < n; ++c) Y(q, c) = cast_nearest<In>(X(row, c));
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

namespace detail {
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
}  // namespace detail

template <class S, class In>
void gather_batches(const Matrix<S>& X, const BatchRows& first, std::int64_t b,
                    const precision::Rounder& round, std::uint64_t step, const Matrix<In>& Y) {
  precision::with_rounding<double>(round, [&](const auto& typed) {
    if constexpr (detail::gathers_into<std::decay_t<decltype(typed)>, In>())
      gather_batches(X, first, b, typed, step, Y);
    else
      gather_batches<S, In, precision::Rounder>(X, first, b, round, step, Y);
  });
}

/// r(q) = Σ_c X(row q, c)·w(c), accumulated in A (rounded after every addition when
/// `accumulate` emulates a narrower format). On host backends a row is one thread's, summed
/// in kLanes independent partial sums (a loop the compiler vectorizes) added in a fixed
/// order; on devices a team shares a row.
template <class S, class A, class Round>
void partial_margins(const Matrix<S>& X, const BatchRows& first, std::int64_t b, const Vector<A>& w,
                     const Round& accumulate, const Vector<A>& r) {
  const int n = int(X.extent(1));
  const std::int64_t rows = r.extent(0);
  const Round round = accumulate;
  if constexpr (!std::is_same_v<Round, precision::Exact>) {
    Kokkos::parallel_for(
        "minisgd::partial_margins_emulated", Kokkos::RangePolicy<ExecSpace>(0, rows),
        KOKKOS_LAMBDA(const std::int64_t q) {
          const std::int64_t row = first(q / b) + q % b;
          A acc = 0;
          for (int c = 0; c < n; ++c)
            acc = round(acc + round(precision::convert<A>(X(row, c)) * w(c)));
          r(q) = acc;
        });
  } else if constexpr (Kokkos::SpaceAccessibility<HostSpace, MemSpace>::accessible) {
    constexpr int kLanes = 16;
    Kokkos::parallel_for(
        "minisgd::partial_margins", Kokkos::RangePolicy<ExecSpace>(0, rows),
        KOKKOS_LAMBDA(const std::int64_t q) {
          const std::int64_t row = first(q / b) + q % b;
          A part[kLanes] = {};
          int c = 0;
          for (; c + kLanes <= n; c += kLanes)
            for (int l = 0; l < kLanes; ++l)
              part[l] += precision::convert<A>(X(row, c + l)) * w(c + l);
          for (int l = 0; c + l < n; ++l)
            part[l] += precision::convert<A>(X(row, c + l)) * w(c + l);
          A sum = 0;
          for (int l = 0; l < kLanes; ++l) sum += part[l];
          r(q) = sum;
        });
  } else {
    using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
    Kokkos::parallel_for(
        "minisgd::partial_margins", Kokkos::TeamPolicy<ExecSpace>(rows, Kokkos::AUTO),
        KOKKOS_LAMBDA(const Team& team) {
          const std::int64_t q = team.league_rank(), row = first(q / b) + q % b;
          A sum = 0;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(team, n),
              [&](const int c, A& acc) { acc += precision::convert<A>(X(row, c)) * w(c); }, sum);
          Kokkos::single(Kokkos::PerTeam(team), [&]() { r(q) = sum; });
        });
  }
}

template <class S, class A>
void partial_margins(const Matrix<S>& X, const BatchRows& first, std::int64_t b, const Vector<A>& w,
                     const precision::Rounder& accumulate, const Vector<A>& r) {
  precision::with_nearest_rounding<A>(
      accumulate, [&](const auto& round) { partial_margins(X, first, b, w, round, r); });
}

/// v(i) ← round(v(i)) for i in [0, count), random bits keyed by (step, i).
template <class A, class Round>
void round_in_place(const Vector<A>& v, std::int64_t count, const Round& round,
                    std::uint64_t step) {
  if constexpr (!std::is_same_v<Round, precision::Exact>)
    Kokkos::parallel_for(
        "minisgd::round_in_place", Kokkos::RangePolicy<ExecSpace>(0, count),
        KOKKOS_LAMBDA(const std::int64_t i) { v(i) = round(v(i), step, std::uint64_t(i)); });
}

template <class A>
void round_in_place(const Vector<A>& v, std::int64_t count, const precision::Rounder& round,
                    std::uint64_t step) {
  precision::with_rounding<A>(round,
                              [&](const auto& typed) { round_in_place(v, count, typed, step); });
}

/// The coefficients of an outer step of `steps` inner steps (0-based j):
///   scale(j)   = c_j     = Π_{t<j} ρ_t,
///   coef(j, i) = (η_i/b)·a_{j,i} = (η_i/b)·Π_{i<t<j} ρ_t   (i < j),
/// for j = 0..steps; j = steps gives the weight update.
struct Coefficients {
  Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> coef;
  Kokkos::View<double*, MemSpace> scale;
};

/// The inner recurrence, redundantly on every rank, for j = 0..steps−1:
///   z_j = c_j r_j − Σ_{i<j} coef(j,i)·G_{j,i} u_i,   u_j = ℓ'(z_j; y_j),
/// with G the packed Gram and r the summed margins; then v(q) = coef(steps, q/b)·u(q), the
/// weights of the update. The loss L is a template parameter (with_loss). One team walks
/// the steps in order; its threads share the b rows.
template <Loss L, class A, class Round>
void inner_recurrence(const Vector<A>& G, const Vector<A>& r, const Coefficients& k,
                      const Vector<double>& y, const BatchRows& first, std::int64_t b, int steps,
                      const Round& arithmetic, const Vector<A>& u, const Vector<A>& v) {
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  const Round round = arithmetic;
  // A plain `if` on a constant: nvcc refuses a lambda whose first capture of a variable is
  // inside `if constexpr`; the branch not taken is removed all the same.
  constexpr bool exact = std::is_same_v<Round, precision::Exact>;
  const auto coef = k.coef;
  const auto scale = k.scale;
  Kokkos::parallel_for(
      "minisgd::inner_recurrence", Kokkos::TeamPolicy<ExecSpace>(1, Kokkos::AUTO),
      KOKKOS_LAMBDA(const Team& team) {
        for (int j = 0; j < steps; ++j) {
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b), [&](const std::int64_t l) {
            const std::int64_t width = j * b;
            const std::int64_t row = gram_row_offset(j, b) + l * width;  // G_{j,·} row l
            A z = round(A(scale(j)) * r(j * b + l));
            for (int i = 0; i < j; ++i) {
              A dot = 0;
              if (exact) {
                for (std::int64_t c = 0; c < b; ++c) dot += G(row + i * b + c) * u(i * b + c);
              } else {
                for (std::int64_t c = 0; c < b; ++c)
                  dot = round(dot + round(G(row + i * b + c) * u(i * b + c)));
              }
              z = round(z - round(A(coef(j, i)) * dot));
            }
            u(j * b + l) = round(loss_derivative<L>(z, A(y(first(j) + l))));
          });
          team.team_barrier();
        }
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, steps * b), [&](const std::int64_t q) {
          v(q) = round(A(coef(steps, q / b)) * u(q));
        });
      });
}

template <Loss L, class A>
void inner_recurrence(const Vector<A>& G, const Vector<A>& r, const Coefficients& k,
                      const Vector<double>& y, const BatchRows& first, std::int64_t b, int steps,
                      const precision::Rounder& arithmetic, const Vector<A>& u,
                      const Vector<A>& v) {
  precision::with_nearest_rounding<A>(arithmetic, [&](const auto& round) {
    inner_recurrence<L>(G, r, k, y, first, b, steps, round, u, v);
  });
}

/// Host backends: a thread owns a contiguous block of columns (all of them on one thread) and
/// walks the rows in order, adding each row's piece into g, which stays in cache: X streams
/// row by row in long contiguous runs the prefetcher follows. (Blocks of 512 columns, one
/// after the other on one thread, read each 8 KiB row of n = 2000 as four 2 KiB pieces on four
/// passes and ran at a third of the triad bandwidth.) The same additions in the same order as
/// the device kernel below, for any block size.
template <class S, class A, class Round>
void gradient_product_host(const Matrix<S>& X, const BatchRows& first, std::int64_t b, int steps,
                           const Vector<A>& v, const Round& round, const Vector<A>& g) {
  const std::int64_t n = g.extent(0), rows = steps * b;
  const std::int64_t threads = ExecSpace().concurrency();
  const std::int64_t block = kmax<std::int64_t>(16, ((n + threads - 1) / threads + 15) / 16 * 16);
  Kokkos::parallel_for(
      "minisgd::gradient_product", Kokkos::RangePolicy<ExecSpace>(0, (n + block - 1) / block),
      KOKKOS_LAMBDA(const std::int64_t k) {
        const std::int64_t c0 = k * block, width = kmin(block, n - c0);
        A* const sum = g.data() + c0;
        for (std::int64_t c = 0; c < width; ++c) sum[c] = A(0);
        for (std::int64_t q = 0; q < rows; ++q) {
          const S* const x = &X(first(q / b) + q % b, c0);
          const A vq = v(q);
          for (std::int64_t c = 0; c < width; ++c)
            sum[c] = round(sum[c] + round(precision::convert<A>(x[c]) * vq));
        }
      });
}

/// g(c) = Σ_q X(row q, c)·v(q) over the `steps`·b rows of an outer step, accumulated in A
/// (rounded after every operation when `accumulate` emulates a narrower format), each column
/// summed over the rows in order. On devices a team owns a block of columns and walks the rows
/// in order, its lanes along the row: X is read row by row, contiguously.
template <class S, class A, class Round>
void gradient_product(const Matrix<S>& X, const BatchRows& first, std::int64_t b, int steps,
                      const Vector<A>& v, const Round& accumulate, const Vector<A>& g) {
  if constexpr (Kokkos::SpaceAccessibility<HostSpace, MemSpace>::accessible) {
    gradient_product_host(X, first, b, steps, v, accumulate, g);
    return;
  }
  constexpr int kCols = 512;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Team = typename Policy::member_type;
  using Scratch = Kokkos::View<A*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const std::int64_t n = g.extent(0), rows = steps * b;
  const Round round = accumulate;
  Kokkos::parallel_for(
      "minisgd::gradient_product",
      Policy((n + kCols - 1) / kCols, Kokkos::AUTO, Kokkos::AUTO)
          .set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(kCols))),
      KOKKOS_LAMBDA(const Team& team) {
        const std::int64_t c0 = std::int64_t(team.league_rank()) * kCols;
        const int width = int(kmin<std::int64_t>(kCols, n - c0));
        Scratch sum(team.team_scratch(0), kCols);
        Kokkos::parallel_for(Kokkos::TeamVectorRange(team, width),
                             [&](const int c) { sum(c) = A(0); });
        for (std::int64_t q = 0; q < rows; ++q) {
          team.team_barrier();
          const std::int64_t row = first(q / b) + q % b;
          const A vq = v(q);
          Kokkos::parallel_for(Kokkos::TeamVectorRange(team, width), [&](const int c) {
            sum(c) = round(sum(c) + round(precision::convert<A>(X(row, c0 + c)) * vq));
          });
        }
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamVectorRange(team, width),
                             [&](const int c) { g(c0 + c) = sum(c); });
      });
}

/// w(c) ← round(round(scale·w(c)) − g(c)), the outer rounding stochastic (when `weights` is)
/// with the bits keyed by step and the global column col0 + c.
template <class A, class Round>
void apply_gradient(const Vector<A>& g, double final_scale, const Round& weights,
                    std::uint64_t step, std::int64_t col0, const Vector<A>& w) {
  const Round round = weights;
  const A scale = A(final_scale);
  Kokkos::parallel_for(
      "minisgd::apply_gradient", Kokkos::RangePolicy<ExecSpace>(0, w.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t c) {
        w(c) = round(round(scale * w(c)) - g(c), step, std::uint64_t(col0 + c));
      });
}

/// w(c) ← c_{s+1}·w(c) − Σ_q X(row q, c)·v(q): gradient_product into the workspace g (as
/// long as w), then apply_gradient, with the plan's roundings for the accumulation and for w.
template <class S, class A>
void update_weights(const Matrix<S>& X, const BatchRows& first, std::int64_t b, int steps,
                    const Vector<A>& v, double final_scale, const precision::Rounder& accumulate,
                    const precision::Rounder& weights, std::uint64_t step, std::int64_t col0,
                    const Vector<A>& g, const Vector<A>& w) {
  precision::with_nearest_rounding<A>(
      accumulate, [&](const auto& round) { gradient_product(X, first, b, steps, v, round, g); });
  precision::with_rounding<A>(
      weights, [&](const auto& round) { apply_gradient(g, final_scale, round, step, col0, w); });
}

}  // namespace minisgd
