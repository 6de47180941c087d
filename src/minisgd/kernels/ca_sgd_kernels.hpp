#pragma once
// The kernels of one CA-SGD outer step besides the Gram (docs/design.md): gathering the batches
// for the Gram, the partial margins r = Y w_k, the inner recurrence and the local weight
// update. An outer step's s batches are given by the first local row of each; they need
// not be adjacent. Arithmetic runs in A (double or float); a rounding that is not Exact
// emulates a narrower format by rounding after every operation. Each kernel takes its
// rounding as a template parameter (precision::Exact or RoundTo<T, stochastic>); the overload
// taking the plan's run-time precision::Rounder picks that type once per call.
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/launch.hpp"
#include "minisgd/core/vocabulary.hpp"
#include "minisgd/kernels/gram/gram.hpp"
#include "minisgd/kernels/sgd_host_rows.hpp"
#include "minisgd/kernels/sgd_kernels.hpp"
#include "minisgd/models/loss.hpp"
#include "minisgd/precision/rounder.hpp"
#include "minisgd/precision/widen.hpp"

#if defined(__SSE2__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
#include <emmintrin.h>
#endif

namespace minisgd {

/// First local row of each batch of an outer step.
using BatchRows = Kokkos::View<std::int64_t*, MemSpace>;

namespace gather_detail {

#if defined(__SSE2__) && !defined(__AVX512BW__) && !defined(__CUDA_ARCH__) && \
    !defined(__HIP_DEVICE_COMPILE__) && !defined(__SYCL_DEVICE_ONLY__)
#define MINISGD_GATHER_SSE2 1
/// precision::convert<bf16> of four floats, the result in the high half of each 32-bit lane:
/// the same integer steps (+0x7FFF + lsb, or the quiet bit for a NaN) and select.
inline __m128i bf16_high_halves(__m128i u) {
  const __m128i lsb = _mm_and_si128(_mm_srli_epi32(u, 16), _mm_set1_epi32(1));
  const __m128i rounded = _mm_add_epi32(_mm_add_epi32(u, _mm_set1_epi32(0x7FFF)), lsb);
  const __m128i nan =
      _mm_cmpgt_epi32(_mm_and_si128(u, _mm_set1_epi32(0x7FFFFFFF)), _mm_set1_epi32(0x7F800000));
  const __m128i quiet = _mm_or_si128(u, _mm_set1_epi32(0x00400000));
  return _mm_or_si128(_mm_and_si128(nan, quiet), _mm_andnot_si128(nan, rounded));
}

/// y[c] = precision::convert<bf16>(x[c]) for c < n − n mod 8, eight at a time: SSE2 has no
/// unsigned 32 → 16-bit pack, so each high half is sign-extended (an arithmetic shift) and packed
/// with signed saturation, which then never saturates. Returns the count done.
inline std::int64_t cast_bf16_sse2(const float* x, precision::bf16* y, std::int64_t n) {
  std::int64_t c = 0;
  for (; c + 8 <= n; c += 8) {
    const __m128i lo = bf16_high_halves(_mm_castps_si128(_mm_loadu_ps(x + c)));
    const __m128i hi = bf16_high_halves(_mm_castps_si128(_mm_loadu_ps(x + c + 4)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + c),
                     _mm_packs_epi32(_mm_srai_epi32(lo, 16), _mm_srai_epi32(hi, 16)));
  }
  return c;
}
#endif

/// y[c] = precision::convert<In>(x[c]) for c < n, host only: a copy when the types agree; fp32 →
/// bf16 is integer operations and a select, which the compiler vectorizes where it has a 32 →
/// 16-bit truncation (AVX-512) and SSE2 intrinsics do otherwise.
template <class S, class In>
inline void cast_row(const S* KOKKOS_RESTRICT x, In* KOKKOS_RESTRICT y, std::int64_t n) {
  if constexpr (std::is_same_v<S, In>) {
    std::memcpy(y, x, std::size_t(n) * sizeof(S));
  } else {
    std::int64_t c = 0;
#ifdef MINISGD_GATHER_SSE2
    if constexpr (std::is_same_v<In, precision::bf16> && std::is_same_v<S, float>)
      c = cast_bf16_sse2(x, y, n);
#endif
    for (; c < n; ++c) y[c] = precision::convert<In>(x[c]);
  }
}
}  // namespace gather_detail

/// Y(q, c) = X(row q of the stacked batches, c), rounded to the Gram input format (random
/// bits keyed by step and the entry) and stored as In. When that rounding is just the cast
/// to In (round to nearest into In's own format), on host backends a batch (b contiguous rows)
/// is one work item and one vectorized run (cast_row); on devices an entry is one.
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
    Kokkos::parallel_for(
        "minisgd::gather_batches", Kokkos::RangePolicy<ExecSpace>(0, Y.extent(0) / b),
        KOKKOS_LAMBDA(const std::int64_t j) {
          const S* const x = X.data() + first(j) * stride;
          In* const y = Y.data() + j * b * out;
          if (runs) return gather_detail::cast_row(x, y, b * n);
          for (std::int64_t l = 0; l < b; ++l)
            gather_detail::cast_row(x + l * stride, y + l * out, n);
        });
  } else if constexpr (cast) {
    // A thread per entry, consecutive threads along a row: coalesced loads and stores (a thread
    // per row ran at 14.5 GB/s on an H100 at n = 2000, 15 times the Gram it feeds).
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

namespace ca_detail {

/// Rows of one host margins work item: a batch's rows are contiguous, so rows_dot takes them
/// four at a time; enough work per item for short rows, s·b/32 items for the threads.
constexpr std::int64_t kMarginRows = 32;

/// Narrow rows at least this long are summed straight from storage by sgd_detail::row_dot,
/// whose loop the compiler vectorizes with the widening inside; shorter ones are widened into
/// a buffer for rows_dot, whose fixed-length tails they need.
constexpr int kLongRow = 64;

/// z[i] = Σ_c x_i[c]·w[c] for `rows` rows of `stride` elements, all in SGD's margin order, so
/// CA-SGD at s = 1 sums its margins as SGD does: rows_dot (four rows at once, compile-time
/// tails or AVX-512 masks) where it reads S itself (float, double; bf16 and fp16 widened in
/// AVX-512 or AVX2 registers); otherwise narrow storage through row_dot when long, else widened
/// (exactly) a few rows at a time into a buffer that stays in L1 for rows_dot.
template <class S, class A>
inline void margins_of_rows(const S* x, std::int64_t stride, const A* w, int n, std::int64_t rows,
                            A* z) {
  if constexpr (!sgd_detail::reads_directly<A, S>) {
    if (n >= kLongRow) {
      for (std::int64_t i = 0; i < rows; ++i) z[i] = sgd_detail::row_dot(x + i * stride, w, n);
      return;
    }
    const std::int64_t piece = kmax<std::int64_t>(4, 2048 / kmax(n, 1) / 4 * 4);
    float* const buffer = sgd_detail::widening_scratch(kmin(piece, rows) * n);
    for (std::int64_t i0 = 0; i0 < rows; i0 += piece) {
      const std::int64_t count = kmin(piece, rows - i0);
      if (stride == n)  // contiguous rows: one run
        precision::widen(x + i0 * stride, buffer, count * n);
      else
        for (std::int64_t i = 0; i < count; ++i)
          precision::widen(x + (i0 + i) * stride, buffer + i * n, n);
      sgd_detail::rows_dot(static_cast<const float*>(buffer), n, w, n, count, z + i0);
    }
  } else {
    sgd_detail::rows_dot(x, stride, w, n, rows, z);
  }
}

/// Host backends: a work item is up to kMarginRows rows of one batch (contiguous in X).
template <class S, class A>
void partial_margins_host(const Matrix<S>& X, const BatchRows& first, std::int64_t b,
                          const Vector<A>& w, const Vector<A>& r) {
  const int n = int(X.extent(1));
  const std::int64_t chunks = (b + kMarginRows - 1) / kMarginRows;
  const std::int64_t batches = std::int64_t(r.extent(0)) / b, stride = X.stride(0);
  for_each_index("minisgd::partial_margins", batches * chunks,
                 batches * b * n * std::int64_t(sizeof(S)), [=](const std::int64_t k) {
                   const std::int64_t j = k / chunks, r0 = (k % chunks) * kMarginRows;
                   margins_of_rows(&X(first(j) + r0, 0), stride, w.data(), n,
                                   kmin(kMarginRows, b - r0), &r(j * b + r0));
                 });
}

}  // namespace ca_detail

/// r(q) = Σ_c X(row q, c)·w(c), accumulated in A (rounded after every addition when
/// `accumulate` emulates a narrower format). On host backends in SGD's order (rows_dot: 16
/// partial sums added in a fixed tree); on devices a warp shares a row.
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
    ca_detail::partial_margins_host(X, first, b, w, r);
  } else {
    sgd_detail::device_row_dots("minisgd::partial_margins", X, first, b, rows, w, r);
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
/// host memory and no wait for the device (three copies and their fences did this before).
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
  if constexpr (sgd_detail::host_backend) {
    Kokkos::parallel_for("minisgd::inner_recurrence",
                         Policy(1, Kokkos::AUTO).set_scratch_size(level, Kokkos::PerTeam(bytes)),
                         body);
  } else {  // a warp per row of the batch, as many as fit one block
    const Policy one(1, 1, sgd_detail::kDeviceLanes);
    const int warps = int(kmin<std::int64_t>(b, one.team_size_max(body, Kokkos::ParallelForTag())));
    Kokkos::parallel_for(
        "minisgd::inner_recurrence",
        Policy(1, warps, sgd_detail::kDeviceLanes).set_scratch_size(level, Kokkos::PerTeam(bytes)),
        body);
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

namespace ca_detail {

/// Blocks narrower than this keep a chunk's exact sums in registers (SGD's chunk_gradient; rows
/// of HIGGS' 28 + 1 and SUSY's 18 + 1 columns are shorter than a pass over sums in memory).
constexpr int kShortBlock = 48;

/// p[c] += x_i[c]·u_i for row i of a chunk of `rows` rows `stride` apart starting at x.
template <class S, class A>
inline void add_chunk_row(const S* x, std::int64_t stride, std::int64_t rows, std::int64_t i, int n,
                          A ui, A* p) {
  const S* const xi = x + i * stride;
  if constexpr (std::is_same_v<S, A>) {
    // Rows read as stored first touch the next row's pages: the prefetcher stops at each
    // 4 KiB page and this loop is too short per byte to wait (fp32, n = 2000: 0.38 → 0.80 of
    // the triad; lines prefetched two rows ahead in blocks of 16: half the rate).
    (void)rows;
    sgd_detail::touch_pages(xi + stride, xi + stride + n);
    for (int c = 0; c < n; ++c) p[c] += xi[c] * ui;
  } else {
    // Narrow rows (widened here) fetch each line two rows ahead: bf16 at s = 16, b = 32, two
    // threads, n = 2000: 17-24 GB/s without, 23-27 with (two sets of alternated runs); one
    // thread, n = 500: 12-13 → 14-15 GB/s.
    constexpr int kLine = 64 / int(sizeof(S));
    const S* const ahead = xi + (i + 2 < rows ? 2 * stride : 0);
    int c = 0;
    for (; c + kLine <= n; c += kLine) {
      sgd_detail::prefetch_line(ahead + c);
      for (int l = 0; l < kLine; ++l) p[c + l] += precision::convert<A>(xi[c + l]) * ui;
    }
    for (; c < n; ++c) p[c] += precision::convert<A>(xi[c]) * ui;
  }
}

/// p[c] = Σ_{i < rows} x_i[c]·u_i from zero in row order (rows `stride` apart), walking whole
/// rows: one contiguous stream, p in L1. (chunk_gradient's blocks of columns read a chunk as
/// 32 strided streams from memory: 0.3-0.5 of the triad where this runs at 0.6-0.85; SGD's
/// step reads its chunk row by row first, for the margins.) The same sums as chunk_gradient.
template <class S, class A>
inline void chunk_rows_sum(const S* x, std::int64_t stride, int n, const A* u, std::int64_t rows,
                           A* p) {
  for (int c = 0; c < n; ++c) p[c] = A(0);
  for (std::int64_t i = 0; i < rows; ++i) add_chunk_row(x, stride, rows, i, n, u[i], p);
}

/// chunk_rows_sum for two chunks at once (x0, u0, rows0 into p0; x1, u1, rows1 into p1), row i of
/// both in one loop over the columns while both have one: two streams from memory, which one
/// core reads faster than one stream (docs/performance.md, "Several streams at once"). Rows as
/// stored (S = A) only; four chunks at once were slower (four buffers of sums written besides).
template <class A>
inline void two_chunks_rows_sums(const A* x0, const A* x1, std::int64_t stride, int n, const A* u0,
                                 const A* u1, std::int64_t rows0, std::int64_t rows1, A* p0,
                                 A* p1) {
  for (int c = 0; c < n; ++c) p0[c] = p1[c] = A(0);
  const std::int64_t both = kmin(rows0, rows1);
  std::int64_t i = 0;
  for (; i < both; ++i) {
    const A* __restrict const a = x0 + i * stride;
    const A* __restrict const b = x1 + i * stride;
    A* __restrict const pa = p0;
    A* __restrict const pb = p1;
    const A ua = u0[i], ub = u1[i];
    sgd_detail::touch_pages(a + stride, a + stride + n);  // as add_chunk_row
    sgd_detail::touch_pages(b + stride, b + stride + n);
    for (int c = 0; c < n; ++c) {
      pa[c] += a[c] * ua;
      pb[c] += b[c] * ub;
    }
  }
  for (std::int64_t k = i; k < rows0; ++k) add_chunk_row(x0, stride, rows0, k, n, u0[k], p0);
  for (std::int64_t k = i; k < rows1; ++k) add_chunk_row(x1, stride, rows1, k, n, u1[k], p1);
}

}  // namespace ca_detail

/// Host, exact sums: SGD's gradient order (sgd_kernels.hpp) over the s batches, batch after
/// batch: each batch's rows in chunks of kChunk, a chunk's share summed from zero in row order,
/// the shares added in chunk order by sgd_detail::sum_of_chunk_groups (the same bits for any
/// thread count), two chunks at a time. Threads take whole pairs of chunks, so each reads whole
/// contiguous rows (threads over blocks of columns read half rows and ran at 0.1-0.5 of the
/// triad on two cores).
template <class S, class A>
void gradient_chunks_host(const Matrix<S>& X, const BatchRows& first, std::int64_t b, int steps,
                          const Vector<A>& v, const Vector<A>& g) {
  using sgd_detail::kChunk;
  const int n = int(g.extent(0));
  const std::int64_t stride = X.stride(0);
  const std::int64_t per_batch = (b + kChunk - 1) / kChunk;
  sgd_detail::sum_of_chunk_groups<2>(
      "minisgd::gradient_product", steps * per_batch,
      std::int64_t(steps) * b * n * std::int64_t(sizeof(S)), n, g.data(),
      [&](const std::int64_t k0, const int count, A* const p, const std::int64_t pitch,
          auto into_g) {
        constexpr bool kIntoG = decltype(into_g)::value;
        const S* x[2];
        const A* u[2];
        std::int64_t rows[2];
        for (int j = 0; j < count; ++j) {
          const std::int64_t k = k0 + j, r0 = k % per_batch * kChunk;
          rows[j] = kmin(kChunk, b - r0);
          x[j] = &X(first(k / per_batch) + r0, 0);
          u[j] = &v(k / per_batch * b + r0);
        }
        if (n < ca_detail::kShortBlock) {
          for (int j = 0; j < count; ++j)
            sgd_detail::chunk_gradient<kIntoG>(x[j], stride, n, u[j], rows[j],
                                               kIntoG ? p : p + j * pitch);
          return;
        }
        if constexpr (std::is_same_v<S, A>) {
          if (count == 2) {
            // Into g's partials rows, or (on the calling thread, into g) into the thread's
            // partials, which sum_of_chunk_groups leaves unused then, their rows one cache line
            // further apart than the pitch (as measured: docs/performance.md).
            const std::int64_t apart = kIntoG ? pitch + sgd_detail::kLineValues<A> : pitch;
            A* const share = kIntoG ? sgd_detail::partials_scratch<A>(2 * apart) : p;
            ca_detail::two_chunks_rows_sums(x[0], x[1], stride, n, u[0], u[1], rows[0], rows[1],
                                            share, share + apart);
            if constexpr (kIntoG)
              for (int c = 0; c < n; ++c) p[c] = (p[c] + share[c]) + share[apart + c];
            return;
          }
        }
        for (int j = 0; j < count; ++j) {  // a chunk at a time
          if constexpr (kIntoG) {
            A* const share = sgd_detail::partials_scratch<A>(n);
            ca_detail::chunk_rows_sum(x[j], stride, n, u[j], rows[j], share);
            for (int c = 0; c < n; ++c) p[c] += share[c];
          } else {
            ca_detail::chunk_rows_sum(x[j], stride, n, u[j], rows[j], p + j * pitch);
          }
        }
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
/// Exact sums in SGD's order: each batch's chunks of kChunk rows summed from zero in row
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
    sgd_detail::device_chunk_sums("minisgd::gradient_product", X, first, b, steps, v, g);
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
