#pragma once
// The host kernels' loops over rows, written once against the vector type (core/simd/vector.hpp)
// and compiled once per tier: kernels/host/tier_*.cpp include this file after
// core/simd/target_begin.hpp, so every function here is compiled for that tier's
// instructions, and every one is a template on the tier (Isa), so no two translation units
// share a name. Bit for bit the sums of kernels/row_dot.hpp's row_dot and add_row, for every
// tier (tests/kernels/test_sgd_host_rows.cpp runs each):
//  - a margin: 16 interleaved partial sums (kMarginPartialSums), added in a fixed tree. A
//    vector of W lanes holds W of them; the tree's levels wider than a register add whole
//    registers, the rest run inside registers for several rows at once (Vec::tree_sums). A
//    row's tail (n mod 16 values) is one masked load where the tier has masks, else a
//    compile-time count (one instantiation per tail length, chosen once per call). Lanes past
//    a row read as +0, and p + 0·0 = p: a partial sum starts at +0 and is never −0.
//  - a gradient block: g[c] += x_i[c]·u_i over rows in order, the block's sums in registers.
// Narrow storage (bf16, fp16) is read in registers where the tier widens it (AVX2, AVX-512
// with float arithmetic); otherwise the step widens a chunk of rows into a buffer first.
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "minisgd/core/simd/vector.hpp"
#include "minisgd/kernels/host/host_kernels.hpp"
#include "minisgd/kernels/host/scratch.hpp"
#include "minisgd/kernels/row_dot.hpp"
#include "minisgd/kernels/tuning.hpp"
#include "minisgd/models/loss.hpp"
#include "minisgd/precision/storage_types.hpp"

#ifndef MINISGD_SIMD_TARGET_OPEN
#error "kernels/host/row_loops.hpp: for a tier's translation unit, after core/simd/target_begin.hpp"
#endif

namespace minisgd::host {

using simd::Lanes;

/// The four-lane generic vectors compiled for Isa's instructions: where the tier's own vector
/// type does not read a storage type (double into float vectors), the loops use these.
template <class Isa>
struct Quads {
  static constexpr simd::Tier tier = Isa::tier;
};

/// True where Vec<Isa, A> reads S in registers: A itself, or 16-bit codes it widens.
template <class Isa, class A, class S>
constexpr bool reads_in_registers = std::is_same_v<S, A> ||
                                    (std::is_same_v<S, precision::bf16> &&
                                     simd::Vec<Isa, A>::widens_bf16) ||
                                    (std::is_same_v<S, precision::fp16> &&
                                     simd::Vec<Isa, A>::widens_fp16);

/// The vectors the loops of tier Isa use for arithmetic A over storage S.
template <class Isa, class A, class S>
using VecFor = std::conditional_t<reads_in_registers<Isa, A, S> ||
                                      simd::Vec<Isa, A>::form == simd::Tier::generic,
                                  simd::Vec<Isa, A>, simd::Vec<Quads<Isa>, A>>;

/// True where the SGD step reads S as stored; otherwise it widens rows into a float buffer.
template <class Isa, class A, class S>
constexpr bool reads_directly =
    std::is_same_v<S, float> || std::is_same_v<S, double> || reads_in_registers<Isa, A, S>;

template <class Isa, class F, int... K>
MINISGD_SIMD_INLINE void with_constant_in(int v, F& fn, std::integer_sequence<int, K...>) {
  ((v == K ? (fn(std::integral_constant<int, K>{}), 0) : 0), ...);
}
/// fn(std::integral_constant<int, v>{}) for the run-time v in [0, N).
template <class Isa, int N, class F>
MINISGD_SIMD_INLINE void with_constant(int v, F&& fn) {
  with_constant_in<Isa>(v, fn, std::make_integer_sequence<int, N>{});
}

template <class S>
MINISGD_SIMD_INLINE const std::uint16_t* codes(const S* x) {
  return reinterpret_cast<const std::uint16_t*>(x);
}

/// W values of S from x as A (exactly: precision::convert's bits), all of them or a part.
template <class V, class S>
MINISGD_SIMD_INLINE V load(const S* x) {
  using A = typename V::value_type;
  if constexpr (std::is_same_v<S, A>)
    return V::load(x);
  else if constexpr (std::is_same_v<S, precision::bf16> && V::widens_bf16)
    return V::load_bf16(codes(x));
  else if constexpr (std::is_same_v<S, precision::fp16> && V::widens_fp16)
    return V::load_fp16(codes(x));
  else
    return V::generate([x](int l) { return precision::convert<A>(x[l]); });
}
template <class V, class S, class Part>
MINISGD_SIMD_INLINE V load(const S* x, Part part) {
  using A = typename V::value_type;
  if constexpr (std::is_same_v<S, A>) {
    return V::load(x, part);
  } else if constexpr (std::is_same_v<S, precision::bf16> && V::widens_bf16) {
    return V::load_bf16(codes(x), part);
  } else if constexpr (std::is_same_v<S, precision::fp16> && V::widens_fp16) {
    return V::load_fp16(codes(x), part);
  } else {
    constexpr int k = Part::value;  // (a compile-time part: only masked vectors take others)
    return V::generate([x](int l) { return l < k ? precision::convert<A>(x[l]) : A(0); });
  }
}

/// fn(std::integral_constant<int, k>{}) for k = 0 .. K − 1, in order.
template <int K, class F, int... k>
MINISGD_SIMD_INLINE void for_registers_in(F& fn, std::integer_sequence<int, k...>) {
  (fn(std::integral_constant<int, k>{}), ...);
}
template <int K, class F>
MINISGD_SIMD_INLINE void for_registers(F&& fn) {
  for_registers_in<K>(fn, std::make_integer_sequence<int, K>{});
}

// ---- Margins ---------------------------------------------------------------------------------

/// A row's tail past its last 16 values as a run-time count (for vectors with masks).
struct RunTail {
  int count;
};

/// Registers of a row's 16 partial sums.
template <class V>
constexpr int kSumRegisters = kMarginPartialSums / V::lanes;

/// p[k] += x[kW..kW + W)·w[kW..kW + W) over the part of register k that a tail of `tail` values
/// covers (lanes kW .. kW + W − 1 of the 16): nothing where it covers none. A run-time count
/// masks (tiers with masked_tails only); a compile-time one loads whole registers or Lanes<c>.
/// (Overloads rather than `if constexpr` in the caller's generic lambda: nvcc 11 instantiates
/// both branches there.)
template <int k, class V, class S>
MINISGD_SIMD_INLINE void add_tail_register(V* const* p, int rows, const S* const* x,
                                           const typename V::value_type* w, RunTail tail) {
  constexpr int W = V::lanes;
  const int c = tail.count - k * W;
  if (c <= 0) return;
  const auto part = V::mask(c < W ? c : W);
  const V wk = load<V>(w + k * W, part);
  for (int r = 0; r < rows; ++r) p[r][k] = p[r][k] + load<V>(x[r] + k * W, part) * wk;
}
template <int k, class V, class S, int N>
MINISGD_SIMD_INLINE void add_tail_register(V* const* p, int rows, const S* const* x,
                                           const typename V::value_type* w,
                                           std::integral_constant<int, N>) {
  constexpr int W = V::lanes;
  constexpr int c = N - k * W;
  if constexpr (c >= W) {
    const V wk = load<V>(w + k * W);
    for (int r = 0; r < rows; ++r) p[r][k] = p[r][k] + load<V>(x[r] + k * W) * wk;
  } else if constexpr (c > 0) {
    const V wk = load<V>(w + k * W, Lanes<c>{});
    for (int r = 0; r < rows; ++r) p[r][k] = p[r][k] + load<V>(x[r] + k * W, Lanes<c>{}) * wk;
  }
}

/// add_tail_register for every register k of the 16 partial sums.
template <class V, class S, class Tail>
MINISGD_SIMD_INLINE void add_tail(V* const* p, int rows, const S* const* x,
                                  const typename V::value_type* w, Tail tail) {
  for_registers<kSumRegisters<V>>(
      [&](auto reg) { add_tail_register<decltype(reg)::value>(p, rows, x, w, tail); });
}

/// The tree's levels wider than a register: p[k] += p[k + h] for h = K/2, …, 1.
template <class V>
MINISGD_SIMD_INLINE V fold(V* p) {
  for (int h = kSumRegisters<V> / 2; h > 0; h /= 2)
    for (int k = 0; k < h; ++k) p[k] = p[k] + p[k + h];
  return p[0];
}

/// The partial sums of R rows x[0..R) (R = 1 or 4) through the tree's levels wider than a
/// register, into s[0..R): full = n rounded down to 16. Four rows' chains are interleaved, each
/// load of w serving the four.
template <int R, class V, class S, class Tail>
MINISGD_SIMD_INLINE void row_partials(const S* const* x, const typename V::value_type* w, int full,
                                      Tail tail, V* s) {
  constexpr int K = kSumRegisters<V>, W = V::lanes;
  V p[R][K];
  V* rows[R];
  for (int r = 0; r < R; ++r) {
    rows[r] = p[r];
    for (int k = 0; k < K; ++k) p[r][k] = V::zero();
  }
  for (int c = 0; c < full; c += kMarginPartialSums)
    for (int k = 0; k < K; ++k) {
      const V wk = load<V>(w + c + k * W);
      for (int r = 0; r < R; ++r) p[r][k] = p[r][k] + load<V>(x[r] + c + k * W) * wk;
    }
  const S* tails[R];
  for (int r = 0; r < R; ++r) tails[r] = x[r] + full;
  add_tail<V>(rows, R, tails, w + full, tail);
  for (int r = 0; r < R; ++r) s[r] = fold<V>(p[r]);
}

/// z[i] = row_dot(x_i, w, n) for `rows` rows `stride` values apart, walked as the vector
/// form's tier walks them (margin_walk), tree_rows rows' trees finished together.
template <class V, class S, class Tail>
void rows_dot_walk(const S* x, std::int64_t stride, const typename V::value_type* w, int n,
                   std::int64_t rows, typename V::value_type* z, Tail tail) {
  constexpr int R = V::tree_rows;
  constexpr MarginWalk kWalk = margin_walk(V::form, int(sizeof(S)));
  const int full = n - n % kMarginPartialSums;
  const RowWalk walk = n >= kLongRowValues ? kWalk.long_rows : kWalk.short_rows;
  const auto one = [&](std::int64_t i) {
    const S* const xi = x + i * stride;
    V s;
    row_partials<1>(&xi, w, full, tail, &s);
    V::template tree_sums<1>(&s, z + i);
  };
  if (walk == RowWalk::four_runs) {
    // run j: rows [j·q, (j + 1)·q) below `rows`; for t < whole all four runs have a row t
    const std::int64_t q = (rows + 3) / 4, whole = rows - 3 * q;
    for (std::int64_t t = 0; t < q; ++t) {
      if (t < whole) {
        const S* const xr[4] = {x + t * stride, x + (q + t) * stride, x + (2 * q + t) * stride,
                                x + (3 * q + t) * stride};
        V s[4];
        row_partials<4>(xr, w, full, tail, s);
        for (int r = 0; r < 4; ++r) V::template tree_sums<1>(s + r, z + r * q + t);
      } else {
        for (std::int64_t i = t; i < 3 * q && i < rows; i += q) one(i);
      }
    }
    return;
  }
  std::int64_t i = 0;
  if constexpr (R > 1) {
    for (; i + R <= rows; i += R) {
      V s[R];
      for (int h = 0; h < R; h += 4) {
        const S* const xr[4] = {x + (i + h) * stride, x + (i + h + 1) * stride,
                                x + (i + h + 2) * stride, x + (i + h + 3) * stride};
        if (walk == RowWalk::four_interleaved)
          row_partials<4>(xr, w, full, tail, s + h);
        else
          for (int r = 0; r < 4; ++r) row_partials<1>(xr + r, w, full, tail, s + h + r);
      }
      V::template tree_sums<R>(s, z + i);
    }
  }
  for (; i < rows; ++i) one(i);
}

/// z[i] = row_dot(x_i, w, n) for `rows` rows `stride` values apart.
template <class Isa, class A, class S>
void rows_dot(const S* x, std::int64_t stride, const A* w, int n, std::int64_t rows, A* z) {
  using V = VecFor<Isa, A, S>;
  if constexpr (V::masked_tails) {
    rows_dot_walk<V>(x, stride, w, n, rows, z, RunTail{n % kMarginPartialSums});
  } else {
    with_constant<Isa, kMarginPartialSums>(n % kMarginPartialSums, [&](auto tail) {
      rows_dot_walk<V>(x, stride, w, n, rows, z, Lanes<decltype(tail)::value>{});
    });
  }
}

/// out[i] = precision::to_float(in[i]) for i < n, in registers where the tier widens S.
template <class Isa, class S>
void widen_run(const S* in, float* out, std::int64_t n) {
  using F = simd::Vec<Isa, float>;
  std::int64_t i = 0;
  if constexpr (std::is_same_v<S, precision::bf16> && F::widens_bf16) {
    for (; i + F::lanes <= n; i += F::lanes) F::load_bf16(codes(in + i)).store(out + i);
  } else if constexpr (std::is_same_v<S, precision::fp16> && F::widens_fp16) {
    for (; i + F::lanes <= n; i += F::lanes) F::load_fp16(codes(in + i)).store(out + i);
  }
  for (; i < n; ++i) out[i] = precision::to_float(in[i]);
}

/// CA-SGD's and the objective's margins: z[i] = row_dot(x_i, w, n) for `rows` rows `stride`
/// apart. Storage the tier does not read as stored: rows of at least kLongNarrowRowValues
/// through row_dot itself, whose loop the compiler vectorizes with the widening inside; shorter
/// ones widened (exactly) a few rows at a time into a buffer that stays in L1.
template <class Isa, class S, class A>
void margins(const S* x, std::int64_t stride, const A* w, int n, std::int64_t rows, A* z) {
  if constexpr (!reads_directly<Isa, A, S>) {
    if (n >= kLongNarrowRowValues) {
      for (std::int64_t i = 0; i < rows; ++i) z[i] = row_dot(x + i * stride, w, n);
      return;
    }
    const std::int64_t piece = kmax<std::int64_t>(4, kWidenedPieceValues / kmax(n, 1) / 4 * 4);
    float* const buffer = widening_scratch(kmin(piece, rows) * n);
    for (std::int64_t i0 = 0; i0 < rows; i0 += piece) {
      const std::int64_t count = kmin(piece, rows - i0);
      if (stride == n)  // contiguous rows: one run
        widen_run<Isa>(x + i0 * stride, buffer, count * n);
      else
        for (std::int64_t i = 0; i < count; ++i)
          widen_run<Isa>(x + (i0 + i) * stride, buffer + i * n, n);
      rows_dot<Isa>(static_cast<const float*>(buffer), n, w, n, count, z + i0);
    }
  } else {
    rows_dot<Isa>(x, stride, w, n, rows, z);
  }
}

// ---- Gradient blocks ---------------------------------------------------------------------------

/// g[0..width) += Σ_{i < rows} x_i[c]·u_i in row order: kFull registers of sums, the part
/// `part` of one more (nothing for Lanes<0>), then the last `rest` columns one by one.
template <class V, int kFull, class Part, class S>
void add_rows_in_registers(const S* x0, std::int64_t stride, const typename V::value_type* u,
                           std::int64_t rows, typename V::value_type* g, Part part, int width,
                           int rest) {
  using A = typename V::value_type;
  constexpr int W = V::lanes;
  constexpr bool kPart = !std::is_same_v<Part, Lanes<0>>;
  V acc[kFull + 1];
  for (int q = 0; q < kFull; ++q) acc[q] = V::load(g + W * q);
  if constexpr (kPart) acc[kFull] = V::load(g + W * kFull, part);
  const int done = width - rest;
  A last[4] = {};
  for (int c = 0; c < rest; ++c) last[c] = g[done + c];
  for (std::int64_t i = 0; i < rows; ++i) {
    const S* const x = x0 + i * stride;
    const V ui = V::broadcast(u[i]);
    for (int q = 0; q < kFull; ++q) acc[q] = acc[q] + load<V>(x + W * q) * ui;
    if constexpr (kPart) acc[kFull] = acc[kFull] + load<V>(x + W * kFull, part) * ui;
    add_row(x + done, u[i], last, rest);
  }
  for (int q = 0; q < kFull; ++q) acc[q].store(g + W * q);
  if constexpr (kPart) acc[kFull].store(g + W * kFull, part);
  for (int c = 0; c < rest; ++c) g[done + c] = last[c];
}

/// A full block of bf16 rows where V widens pairs of codes: even and odd columns in registers
/// of their own, no lane-crossing widening; the sums stored back in column order.
template <class V, int kCols>
void add_rows_bf16_pairs(const precision::bf16* x0, std::int64_t stride, const float* u,
                         std::int64_t rows, float* g) {
  constexpr int kPairs = kCols / (2 * V::lanes), kSpan = 2 * V::lanes;
  V even[kPairs], odd[kPairs];
  for (int k = 0; k < kPairs; ++k) V::deinterleave(g + kSpan * k, even[k], odd[k]);
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::uint16_t* const x = codes(x0 + i * stride);
    const V ui = V::broadcast(u[i]);
    for (int k = 0; k < kPairs; ++k) {
      V xe, xo;
      V::load_bf16_pairs(x + kSpan * k, xe, xo);
      even[k] = even[k] + xe * ui;
      odd[k] = odd[k] + xo * ui;
    }
  }
  for (int k = 0; k < kPairs; ++k) V::interleave(g + kSpan * k, even[k], odd[k]);
}

/// g[0..width) += Σ_{i < rows} x_i[c]·u_i in row order, for a block of width ≤ kCols columns,
/// one instantiation per count of whole registers: with masks, the last register masked to the
/// block; without, registers of four lanes' multiples and then up to three columns one by one.
template <class Isa, int kCols, class A, class S>
void add_rows(const S* x, std::int64_t stride, const A* u, std::int64_t rows, A* g, int width) {
  using V = VecFor<Isa, A, S>;
  constexpr int W = V::lanes;
  if constexpr (V::bf16_pairs && std::is_same_v<S, precision::bf16> && kCols % (2 * W) == 0)
    if (width == kCols) return add_rows_bf16_pairs<V, kCols>(x, stride, u, rows, g);
  if constexpr (V::masked_tails) {
    with_constant<Isa, kCols / W + 1>((width + W - 1) / W, [&](auto regs) {
      constexpr int kRegs = decltype(regs)::value;
      if constexpr (kRegs > 0)
        add_rows_in_registers<V, kRegs - 1>(x, stride, u, rows, g, V::mask(width - W * (kRegs - 1)),
                                            width, 0);
    });
  } else {
    with_constant<Isa, kCols / 4 + 1>(width / 4, [&](auto quads) {
      constexpr int kLanes = 4 * decltype(quads)::value;
      add_rows_in_registers<V, kLanes / W>(x, stride, u, rows, g, Lanes<kLanes % W>{}, width,
                                           width % 4);
    });
  }
}

/// One chunk's share of a gradient, p[c] = Σ_{i < rows} x_i[c]·u_i from zero in row order
/// (rows `stride` apart), a block of the tier's gradient_block_columns at a time: added into
/// g (kIntoG: g[c] += p[c] block by block) or stored in p.
template <class Isa, bool kIntoG, class A, class T>
void chunk_gradient(const T* x, std::int64_t stride, int n, const A* u, std::int64_t rows, A* p) {
  constexpr int kCols = gradient_block_columns<A>(Isa::tier);
  for (int c0 = 0; c0 < n; c0 += kCols) {
    const int width = kmin(kCols, n - c0);
    if constexpr (kIntoG) {
      A block[kCols] = {};
      add_rows<Isa, kCols>(x + c0, stride, u, rows, block, width);
      for (int c = 0; c < width; ++c) p[c0 + c] += block[c];
    } else {
      for (int c = 0; c < width; ++c) p[c0 + c] = A(0);
      add_rows<Isa, kCols>(x + c0, stride, u, rows, p + c0, width);
    }
  }
}

template <class Isa, class S, class A>
void chunk_sum(const S* x, std::int64_t stride, int n, const A* u, std::int64_t rows, A* p) {
  chunk_gradient<Isa, false>(x, stride, n, u, rows, p);
}

// ---- SGD's step --------------------------------------------------------------------------------

/// The margins (unless given) and derivatives of `rows` rows x (n values apart): z, u, y at
/// the rows' own entries.
template <class Isa, Loss L, class A, class T>
MINISGD_SIMD_INLINE void chunk_derivatives(const T* x, int n, const A* w, const double* y, A* z,
                                           A* u, std::int64_t rows, bool margins_given) {
  if (!margins_given) rows_dot<Isa>(x, n, w, n, rows, z);
  for (std::int64_t i = 0; i < rows; ++i) u[i] = loss_derivative<L>(z[i], A(y[i]));
}

/// Chunk k of the batch, read from memory once (widened once into the thread's buffer when
/// the tier does not read S as stored): its margins (unless given) and derivatives, then its
/// share of the gradient from cache. It first touches the pages of the next chunk.
template <class Isa, Loss L, bool kIntoG, class S, class A>
void sgd_chunk(const SgdBatch<S, A>& a, std::int64_t k, A* p) {
  const int n = a.n;
  const std::int64_t r0 = k * kChunkRows, rows = kmin(kChunkRows, a.b - r0);
  const S* const x = a.x + r0 * n;
  if (r0 + rows < a.b)  // the next chunk's pages
    touch_pages(x + rows * n, a.x + kmin(a.b, r0 + rows + kChunkRows) * n);
  if constexpr (!reads_directly<Isa, A, S>) {
    float* const buffer = widening_scratch(kChunkRows * n);
    widen_run<Isa>(x, buffer, rows * n);
    chunk_derivatives<Isa, L>(static_cast<const float*>(buffer), n, a.w, a.y + r0, a.z + r0,
                              a.u + r0, rows, a.margins_given);
    chunk_gradient<Isa, kIntoG>(static_cast<const float*>(buffer), n, n, a.u + r0, rows, p);
  } else {
    chunk_derivatives<Isa, L>(x, n, a.w, a.y + r0, a.z + r0, a.u + r0, rows, a.margins_given);
    chunk_gradient<Isa, kIntoG>(x, n, n, a.u + r0, rows, p);
  }
}

/// The whole step on the calling thread, rows read as stored: the margins and derivatives of
/// a group of chunks (margins_group) in one pass, then each chunk's share of the gradient
/// rereading its rows from cache, added into g in chunk order: sgd_chunk's additions in the
/// same order, so the same bits. A group of long rows first touches the pages of the next one;
/// short rows touch none.
template <class Isa, Loss L, class S, class A>
void sgd_grouped(const SgdBatch<S, A>& a, A* g) {
  const int n = a.n;
  const std::int64_t b = a.b, row_bytes = n * std::int64_t(sizeof(S));
  const std::int64_t group_rows = margins_group(row_bytes) * kChunkRows;
  const bool long_rows = row_bytes >= kGroupedMarginsRowBytes;
  for (int c = 0; c < n; ++c) g[c] = A(0);
  for (std::int64_t r0 = 0; r0 < b; r0 += group_rows) {
    const std::int64_t rows = kmin(group_rows, b - r0);
    if (long_rows && r0 + rows < b)  // the next group's pages
      touch_pages(a.x + (r0 + rows) * n, a.x + kmin(b, r0 + rows + group_rows) * n);
    chunk_derivatives<Isa, L>(a.x + r0 * n, n, a.w, a.y + r0, a.z + r0, a.u + r0, rows, false);
    for (std::int64_t c0 = r0; c0 < r0 + rows; c0 += kChunkRows)
      chunk_gradient<Isa, true>(a.x + c0 * n, n, n, a.u + c0, kmin(kChunkRows, b - c0), g);
  }
}

// ---- CA-SGD's gradient -------------------------------------------------------------------------

/// p[c] += x_i[c]·u_i for row i of a chunk of `rows` rows `stride` apart starting at x.
template <class Isa, class S, class A>
MINISGD_SIMD_INLINE void add_chunk_row(const S* x, std::int64_t stride, std::int64_t rows,
                                       std::int64_t i, int n, A ui, A* p) {
  const S* const xi = x + i * stride;
  if constexpr (std::is_same_v<S, A>) {
    // Rows read as stored first touch the next row's pages: the prefetcher stops at each
    // page, and this loop is too short per byte to wait for it.
    (void)rows;
    touch_pages(xi + stride, xi + stride + n);
    for (int c = 0; c < n; ++c) p[c] += xi[c] * ui;
  } else {
    // Narrow rows, widened here, fetch each line kPrefetchRowsAhead rows ahead. The line's
    // arithmetic is written with the tier's vectors: a loop that the compiler vectorizes
    // itself loses its prefetches (GCC drops them).
    using V = VecFor<Isa, A, S>;
    constexpr int kLine = 64 / int(sizeof(S));
    static_assert(kLine % V::lanes == 0, "a line holds whole vectors");
    const S* const ahead = xi + (i + kPrefetchRowsAhead < rows ? kPrefetchRowsAhead * stride : 0);
    const V u = V::broadcast(ui);
    int c = 0;
    for (; c + kLine <= n; c += kLine) {
      prefetch_line(ahead + c);
      for (int l = 0; l < kLine; l += V::lanes)
        (V::load(p + c + l) + load<V>(xi + c + l) * u).store(p + c + l);
    }
    for (; c < n; ++c) p[c] += precision::convert<A>(xi[c]) * ui;
  }
}

/// p[c] = Σ_{i < rows} x_i[c]·u_i from zero in row order (rows `stride` apart), walking whole
/// rows: one contiguous stream, p in L1 (blocks of columns would read a chunk as 32 strided
/// streams). The same sums as chunk_gradient.
template <class Isa, class S, class A>
void chunk_rows_sum(const S* x, std::int64_t stride, int n, const A* u, std::int64_t rows, A* p) {
  for (int c = 0; c < n; ++c) p[c] = A(0);
  for (std::int64_t i = 0; i < rows; ++i) add_chunk_row<Isa>(x, stride, rows, i, n, u[i], p);
}

/// chunk_rows_sum for two chunks at once (x0, u0, rows0 into p0; x1, u1, rows1 into p1), row i of
/// both in one loop over the columns while both have one: two streams from memory, which one
/// core reads faster than one stream (docs/performance.md, "Several streams at once"). Rows as
/// stored (S = A) only; four chunks at once were slower (four buffers of sums written besides).
template <class Isa, class A>
void two_chunks_rows_sums(const A* x0, const A* x1, std::int64_t stride, int n, const A* u0,
                          const A* u1, std::int64_t rows0, std::int64_t rows1, A* p0, A* p1) {
  for (int c = 0; c < n; ++c) p0[c] = p1[c] = A(0);
  const std::int64_t both = kmin(rows0, rows1);
  std::int64_t i = 0;
  for (; i < both; ++i) {
    const A* __restrict const a = x0 + i * stride;
    const A* __restrict const b = x1 + i * stride;
    A* __restrict const pa = p0;
    A* __restrict const pb = p1;
    const A ua = u0[i], ub = u1[i];
    touch_pages(a + stride, a + stride + n);  // as add_chunk_row
    touch_pages(b + stride, b + stride + n);
    for (int c = 0; c < n; ++c) {
      pa[c] += a[c] * ua;
      pb[c] += b[c] * ub;
    }
  }
  for (std::int64_t k = i; k < rows0; ++k) add_chunk_row<Isa>(x0, stride, rows0, k, n, u0[k], p0);
  for (std::int64_t k = i; k < rows1; ++k) add_chunk_row<Isa>(x1, stride, rows1, k, n, u1[k], p1);
}

/// SGD's gradient order over CA-SGD's batches (RowKernels::ca_shares_*): the shares of `count`
/// ≤ 2 chunks from chunk k0. Rows narrower than kWalkedRowValues: each chunk's sums in
/// registers (chunk_gradient); wider: whole rows walked, two chunks at once where S = A. Into
/// g, a pair of shares goes through the thread's partials (unused then by
/// sum_of_chunk_groups), their rows one cache line further apart than the pitch.
template <class Isa, bool kIntoG, class S, class A>
void ca_shares(const CaBatches<S, A>& a, std::int64_t k0, int count, A* p, std::int64_t pitch) {
  const int n = a.n;
  const std::int64_t per_batch = (a.b + kChunkRows - 1) / kChunkRows;
  const S* x[2];
  const A* u[2];
  std::int64_t rows[2];
  for (int j = 0; j < count; ++j) {
    const std::int64_t k = k0 + j, r0 = k % per_batch * kChunkRows;
    rows[j] = kmin(kChunkRows, a.b - r0);
    x[j] = a.x + (a.first[k / per_batch] + r0) * a.stride;
    u[j] = a.v + k / per_batch * a.b + r0;
  }
  if (n < kWalkedRowValues) {
    for (int j = 0; j < count; ++j)
      chunk_gradient<Isa, kIntoG>(x[j], a.stride, n, u[j], rows[j], kIntoG ? p : p + j * pitch);
    return;
  }
  if constexpr (std::is_same_v<S, A>) {
    if (count == 2) {
      const std::int64_t apart = kIntoG ? pitch + kLineValues<A> : pitch;
      A* const share = kIntoG ? partials_scratch<A>(2 * apart) : p;
      two_chunks_rows_sums<Isa>(x[0], x[1], a.stride, n, u[0], u[1], rows[0], rows[1], share,
                                share + apart);
      if constexpr (kIntoG)
        for (int c = 0; c < n; ++c) p[c] = (p[c] + share[c]) + share[apart + c];
      return;
    }
  }
  for (int j = 0; j < count; ++j) {  // a chunk at a time
    if constexpr (kIntoG) {
      A* const share = partials_scratch<A>(n);
      chunk_rows_sum<Isa>(x[j], a.stride, n, u[j], rows[j], share);
      for (int c = 0; c < n; ++c) p[c] += share[c];
    } else {
      chunk_rows_sum<Isa>(x[j], a.stride, n, u[j], rows[j], p + j * pitch);
    }
  }
}

// ---- Gather, objective -------------------------------------------------------------------------

/// y[c] = precision::convert<In>(x[c]) for c < n: a copy when the types agree; 16-bit codes to
/// fp32 widened (widen_run); fp32 → bf16 is integer operations and a select, which the compiler
/// vectorizes where it has a 32 → 16-bit truncation (AVX-512) and the vector type does
/// otherwise (Vec::cast_bf16).
template <class Isa, class S, class In>
void cast_run(const S* KOKKOS_RESTRICT x, In* KOKKOS_RESTRICT y, std::int64_t n) {
  if constexpr (std::is_same_v<S, In>) {
    std::memcpy(y, x, std::size_t(n) * sizeof(S));
  } else if constexpr (std::is_same_v<In, float> &&
                       (std::is_same_v<S, precision::bf16> || std::is_same_v<S, precision::fp16>)) {
    widen_run<Isa>(x, y, n);
  } else {
    std::int64_t c = 0;
    if constexpr (std::is_same_v<In, precision::bf16> && std::is_same_v<S, float>)
      c = simd::Vec<Isa, float>::cast_bf16(x, reinterpret_cast<std::uint16_t*>(y), n);
    for (; c < n; ++c) y[c] = precision::convert<In>(x[c]);
  }
}

/// z[i] ← ℓ(z[i]; y[i]) for i < n, a loop the compiler vectorizes (loss_value is branch-free
/// for the logistic and linear losses).
template <class Isa, Loss L>
void loss_values(double* z, const double* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) z[i] = loss_value<L>(z[i], y[i]);
}

// ---- The tables --------------------------------------------------------------------------------

template <class Isa, class S, class A>
const RowKernels<S, A>& tier_row_kernels() {
  static constexpr RowKernels<S, A> kernels{&margins<Isa, S, A>, &chunk_sum<Isa, S, A>,
                                            &ca_shares<Isa, true, S, A>,
                                            &ca_shares<Isa, false, S, A>};
  return kernels;
}

template <class Isa, Loss L, class S, class A>
constexpr auto grouped_step() {
  void (*grouped)(const SgdBatch<S, A>&, A*) = nullptr;
  if constexpr (reads_directly<Isa, A, S>) grouped = &sgd_grouped<Isa, L, S, A>;
  return grouped;
}

template <class Isa, Loss L, class S, class A>
const StepKernels<L, S, A>& tier_step_kernels() {
  static constexpr StepKernels<L, S, A> kernels{&sgd_chunk<Isa, L, true, S, A>,
                                                &sgd_chunk<Isa, L, false, S, A>,
                                                grouped_step<Isa, L, S, A>()};
  return kernels;
}

template <class Isa, class S, class In>
CastKernel<S, In> tier_cast_kernel() {
  return &cast_run<Isa, S, In>;
}

template <class Isa, Loss L>
LossValuesKernel tier_loss_values_kernel() {
  return &loss_values<Isa, L>;
}

#define MINISGD_TIER_ROW(Isa, S, A) template const RowKernels<S, A>& tier_row_kernels<Isa, S, A>();
#define MINISGD_TIER_STEP(Isa, L, S, A) \
  template const StepKernels<L, S, A>& tier_step_kernels<Isa, L, S, A>();
#define MINISGD_TIER_STEPS(Isa, L) MINISGD_HOST_STEP_TYPES(MINISGD_TIER_STEP, Isa, L)
#define MINISGD_TIER_CAST(Isa, S, In) template CastKernel<S, In> tier_cast_kernel<Isa, S, In>();
#define MINISGD_TIER_LOSS(Isa, L) template LossValuesKernel tier_loss_values_kernel<Isa, L>();
/// Every table of tier Isa (in its translation unit).
#define MINISGD_HOST_TIER_TABLES(Isa)           \
  MINISGD_HOST_ROW_TYPES(MINISGD_TIER_ROW, Isa) \
  MINISGD_HOST_LOSSES(MINISGD_TIER_STEPS, Isa)  \
  MINISGD_HOST_CAST_TYPES(MINISGD_TIER_CAST, Isa) MINISGD_HOST_LOSSES(MINISGD_TIER_LOSS, Isa)

}  // namespace minisgd::host
