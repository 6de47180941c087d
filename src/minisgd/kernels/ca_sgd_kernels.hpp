#pragma once
// The kernels of one CA-SGD outer step besides the Gram (docs/design.md): gathering the batches
// for the Gram (kernels/gather.hpp), the partial margins r = Y w_k, the inner recurrence and the
// local weight update. An outer step's s batches are given by the first local row of each; they
// need not be adjacent. Arithmetic runs in A (double or float); a rounding that is not Exact
// emulates a narrower format by rounding after every operation. Each kernel takes its
// rounding as a template parameter (precision::Exact or RoundTo<T, stochastic>); the overload
// taking the plan's run-time precision::Rounder picks that type once per call.
#include <cstdint>
#include <type_traits>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/launch.hpp"
#include "minisgd/core/simd/tier.hpp"
#include "minisgd/core/vocabulary.hpp"
#include "minisgd/kernels/device/row_kernels.hpp"
#include "minisgd/kernels/gather.hpp"
#include "minisgd/kernels/gram/gram.hpp"
#include "minisgd/kernels/host/chunk_sums.hpp"
#include "minisgd/kernels/host/host_kernels.hpp"
#include "minisgd/kernels/tuning.hpp"
#include "minisgd/models/loss.hpp"
#include "minisgd/precision/rounder.hpp"

namespace minisgd {

/// Host backends: a work item is up to kMarginItemRows rows of one batch (contiguous in X),
/// summed by the active tier's margins loop (SGD's margin order).
template <class S, class A>
void partial_margins_host(const Matrix<S>& X, const BatchRows& first, std::int64_t b,
                          const Vector<A>& w, const Vector<A>& r) {
  const auto margins = host::row_kernels<S, A>(simd::active_tier()).margins;
  const int n = int(X.extent(1));
  const std::int64_t chunks = (b + kMarginItemRows - 1) / kMarginItemRows;
  const std::int64_t batches = std::int64_t(r.extent(0)) / b, stride = X.stride(0);
  for_each_index("minisgd::partial_margins", batches * chunks,
                 batches * b * n * std::int64_t(sizeof(S)), [=](const std::int64_t k) {
                   const std::int64_t j = k / chunks, r0 = (k % chunks) * kMarginItemRows;
                   margins(X.data() + (first(j) + r0) * stride, stride, w.data(), n,
                           kmin(kMarginItemRows, b - r0), r.data() + j * b + r0);
                 });
}

/// r(q) = Σ_c X(row q, c)·w(c), accumulated in A (rounded after every addition when
/// `accumulate` emulates a narrower format). On host backends in SGD's order (16 partial sums
/// added in a fixed tree, row_dot.hpp); on devices a warp shares a row.
template <class S, class A, class Round>
void partial_margins(const Matrix<S>& X, const BatchRows& first, std::int64_t b, const Vector<A>& w,
                     const Round& accumulate, const Vector<A>& r) {
  [[maybe_unused]] const int n = int(X.extent(1));  // (named before the constexpr-if: nvcc)
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
    partial_margins_host(X, first, b, w, r);
  } else {
    device::device_row_dots("minisgd::partial_margins", X, first, b, rows, w, r);
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
    for_each_index(
        "minisgd::round_in_place", count, 2 * count * std::int64_t(sizeof(A)),
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

/// Row j of the coefficients from the inner steps' η and ρ: coef[i] for i < j, built from the
/// right, and c_j (returned), the product from the left. Host and device compute them with this
/// one function, so with the same operations in the same order.
KOKKOS_INLINE_FUNCTION double coefficient_row(int j, const double* eta, const double* rho, double b,
                                              double* coef) {
  double between = 1.0;
  for (int i = j - 1; i >= 0; --i) {
    coef[i] = eta[i] / b * between;
    between *= rho[i];
  }
  double scale = 1.0;
  for (int t = 0; t < j; ++t) scale *= rho[t];
  return scale;
}

/// Outer steps of at most this many inner steps reach the device as the arguments of one
/// kernel launch (OuterSteps by value: 24 B a step, under CUDA's 4 KB of kernel arguments).
constexpr int kLaunchedSteps = 64;

/// What an outer step's kernels need from the host: each inner step's batch, η and ρ.
struct OuterSteps {
  int steps = 0;
  std::int64_t b = 0;
  std::int64_t batch[kLaunchedSteps] = {};
  double eta[kLaunchedSteps] = {}, rho[kLaunchedSteps] = {};
};

/// first(j) = the first row of batch j and the coefficients (rows 0..steps) of an outer step,
/// computed where the kernels run, in one launch whose arguments carry the steps: no copy from
/// host memory and no wait for the device.
inline void set_up_outer_step(const OuterSteps& o, const BatchRows& first, const Coefficients& k) {
  const auto coef = k.coef;
  const auto scale = k.scale;
  const auto row = KOKKOS_LAMBDA(const std::int64_t j) {
    if (j < o.steps) first(j) = o.batch[j] * o.b;
    scale(j) = coefficient_row(int(j), o.eta, o.rho, double(o.b), &coef(j, 0));
  };
  if constexpr (kHostMemory)
    for_each_index("minisgd::ca_set_up_step", o.steps + 1, 0, row);
  else
    Kokkos::parallel_for(
        "minisgd::ca_set_up_step",
        Kokkos::Experimental::require(Kokkos::RangePolicy<ExecSpace>(0, o.steps + 1),
                                      Kokkos::Experimental::WorkItemProperty::HintLightWeight),
        row);
}

/// The inner recurrence, redundantly on every rank, for j = 0..steps−1:
///   z_j = c_j r_j − Σ_{i<j} coef(j,i)·G_{j,i} u_i,   u_j = ℓ'(z_j; y_j),
/// with G the packed Gram and r the summed margins; then v(q) = coef(steps, q/b)·u(q), the
/// weights of the update. The loss L is a template parameter (with_loss). One team walks the
/// steps in order. In step j every dot G_{j,i}·u_i (row l of block (j, i), i < j) is
/// independent: the team's threads take the rows and their vector lanes the blocks i, each
/// summing its dot in column order into scratch; then a thread per row adds them in the order
/// of i and takes the derivative. The same operations in the same order on every backend, so
/// the same bits (a warp per row with a lane per block on devices: the j·b dots of a step at once).
template <Loss L, class A, class Round>
void inner_recurrence(const Vector<A>& G, const Vector<A>& r, const Coefficients& k,
                      const Vector<double>& y, const BatchRows& first, std::int64_t b, int steps,
                      const Round& arithmetic, const Vector<A>& u, const Vector<A>& v) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Team = typename Policy::member_type;
  using Scratch = Kokkos::View<A**, Kokkos::LayoutRight, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const Round round = arithmetic;
  // A plain `if` on a constant: nvcc refuses a lambda whose first capture of a variable is
  // inside `if constexpr`; the branch not taken is removed all the same.
  constexpr bool exact = std::is_same_v<Round, precision::Exact>;
  const auto coef = k.coef;
  const auto scale = k.scale;
  const std::size_t bytes = Scratch::shmem_size(b, kmax(steps, 1));
  const int level = bytes <= 32 * 1024 ? 0 : 1;  // else global memory (b·s beyond 8192 floats)
  const auto body = KOKKOS_LAMBDA(const Team& team) {
    Scratch dots(team.team_scratch(level), b, kmax(steps, 1));
    for (int j = 0; j < steps; ++j) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b), [&](const std::int64_t l) {
        const std::int64_t row = gram_row_offset(j, b) + l * (j * b);  // G_{j,·} row l
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, j), [&](const int i) {
          const std::int64_t g = row + i * b, x = i * b;
          A dot = 0;
          if (exact) {
            for (std::int64_t c = 0; c < b; ++c) dot += G(g + c) * u(x + c);
          } else {
            for (std::int64_t c = 0; c < b; ++c) dot = round(dot + round(G(g + c) * u(x + c)));
          }
          dots(l, i) = dot;
        });
      });
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, b), [&](const std::int64_t l) {
        A z = round(A(scale(j)) * r(j * b + l));
        for (int i = 0; i < j; ++i) z = round(z - round(A(coef(j, i)) * dots(l, i)));
        u(j * b + l) = round(loss_derivative<L>(z, A(y(first(j) + l))));
      });
      team.team_barrier();
    }
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, steps * b),
                         [&](const std::int64_t q) { v(q) = round(A(coef(steps, q / b)) * u(q)); });
  };
  if constexpr (kHostMemory) {
    Kokkos::parallel_for("minisgd::inner_recurrence",
                         Policy(1, Kokkos::AUTO).set_scratch_size(level, Kokkos::PerTeam(bytes)),
                         body);
  } else {  // a warp per row of the batch, as many as fit one block
    const Policy one(1, 1, kDeviceLanes);
    const int warps = int(kmin<std::int64_t>(b, one.team_size_max(body, Kokkos::ParallelForTag())));
    Kokkos::parallel_for(
        "minisgd::inner_recurrence",
        Policy(1, warps, kDeviceLanes).set_scratch_size(level, Kokkos::PerTeam(bytes)), body);
  }
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

/// Host, exact sums: SGD's gradient order (sgd_kernels.hpp) over the s batches, batch after
/// batch: each batch's rows in chunks of kChunkRows, a chunk's share summed from zero in row
/// order, the shares added in chunk order by host::sum_of_chunk_groups (the same bits for any
/// thread count), two chunks at a time (the active tier's RowKernels::ca_shares_*). Threads take
/// whole pairs of chunks, so each reads whole contiguous rows (threads over blocks of columns
/// read half rows, and left most of the memory's rate unused).
template <class S, class A>
void gradient_chunks_host(const Matrix<S>& X, const BatchRows& first, std::int64_t b, int steps,
                          const Vector<A>& v, const Vector<A>& g) {
  const auto& loops = host::row_kernels<S, A>(simd::active_tier());
  const int n = int(g.extent(0));
  const host::CaBatches<S, A> batches{
      X.data(), std::int64_t(X.stride(0)), first.data(), v.data(), b, n};
  const std::int64_t per_batch = (b + kChunkRows - 1) / kChunkRows;
  host::sum_of_chunk_groups<2>("minisgd::gradient_product", steps * per_batch,
                               std::int64_t(steps) * b * n * std::int64_t(sizeof(S)), n, g.data(),
                               [&](const std::int64_t k0, const int count, A* const p,
                                   const std::int64_t pitch, auto into_g) {
                                 if constexpr (decltype(into_g)::value)
                                   loops.ca_shares_into_g(batches, k0, count, p, pitch);
                                 else
                                   loops.ca_shares_stored(batches, k0, count, p, pitch);
                               });
}

/// Host, sums rounded after every operation (an emulated narrower accumulator): a thread owns
/// a contiguous block of columns (all of them on one thread) and walks the rows in order, as
/// the narrow accumulator would, adding each row's piece into g, which stays in cache.
template <class S, class A, class Round>
void gradient_rounded_host(const Matrix<S>& X, const BatchRows& first, std::int64_t b, int steps,
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
          const S* const xq = &X(first(q / b) + q % b, c0);
          const A vq = v(q);
          for (std::int64_t c = 0; c < width; ++c)
            sum[c] = round(sum[c] + round(precision::convert<A>(xq[c]) * vq));
        }
      });
}

/// g(c) = Σ_q X(row q, c)·v(q) over the `steps`·b rows of an outer step, accumulated in A.
/// Exact sums in SGD's order: each batch's chunks of kChunkRows rows summed from zero in row
/// order, the chunks' sums added in order (batch after batch). Sums rounded after every
/// operation (`accumulate` emulating a narrower format): each column over the rows in order, as
/// the narrow accumulator would. On devices, exact: SGD's device_chunk_sums (warps sum chunks at
/// once, the team adds them in order); rounded: a team owns a block of columns and walks the rows
/// in order. Every path makes the same additions in the same order.
template <class S, class A, class Round>
void gradient_product(const Matrix<S>& X, const BatchRows& first, std::int64_t b, int steps,
                      const Vector<A>& v, const Round& accumulate, const Vector<A>& g) {
  if constexpr (Kokkos::SpaceAccessibility<HostSpace, MemSpace>::accessible) {
    if constexpr (std::is_same_v<Round, precision::Exact>)
      gradient_chunks_host(X, first, b, steps, v, g);
    else
      gradient_rounded_host(X, first, b, steps, v, accumulate, g);
    return;
  }
  if constexpr (std::is_same_v<Round, precision::Exact>) {
    device::device_chunk_sums("minisgd::gradient_product", X, first, b, steps, v, g);
    return;
  }
  constexpr int kCols = kDeviceRoundedColumns;
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
  const std::int64_t n = w.extent(0);
  for_each_index(
      "minisgd::apply_gradient", n, 3 * n * std::int64_t(sizeof(A)),
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
