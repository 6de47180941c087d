#pragma once
// The host side of the SGD step's inner loops, bit for bit the sums of sgd_kernels.hpp's
// row_dot and add_row, written so that short rows (tens of columns: HIGGS, SUSY) vectorize
// too: the length of a row's tail (n mod kLanes) and the width of a partial gradient block
// are compile-time constants (one instantiation each, chosen once per call), and with GCC or
// Clang the 16 partial sums of a margin are four 4-lane vectors. Built for AVX-512 (BW, VL;
// MINISGD_ARCH, docs/building.md) the fp32 loops use 16-lane registers instead: a margin's
// partial sums are one register, tails are masked loads, and bf16/fp16 rows are widened in
// registers as they are loaded. Built for AVX2 without AVX-512, fp32 rows (and narrow rows
// widened to fp32) use 8-lane registers. Without vector extensions (other compilers) the same
// functions fall back to the scalar loops, with the same bits.
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/precision/storage_types.hpp"

#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDA_ARCH__) && \
    !defined(__HIP_DEVICE_COMPILE__) && !defined(__SYCL_DEVICE_ONLY__)
#define MINISGD_HOST_VECTORS 1
// The helpers a loop calls once per row or per few rows are always inlined. Left to GCC, the
// choice varies with the translation unit, and out of line their arrays of partial sums live on
// the stack, zeroed by `rep stos` at every call: in the application's build of the margins
// that was a third of a 28-column step in cache (docs/performance.md, "Inlined by force").
#define MINISGD_ROW_INLINE __attribute__((always_inline)) inline
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    (defined(__clang__) || __GNUC__ >= 12)  // __builtin_shufflevector
#define MINISGD_HOST_AVX512 1
#include <immintrin.h>
#endif
#endif

namespace minisgd::sgd_detail {

/// At least `size` floats, 64-byte aligned, for widened rows: one buffer per host thread,
/// kept between calls (it only grows), shared by the SGD and CA-SGD host loops, which never
/// hold it across a call of each other.
inline float* widening_scratch(std::int64_t size) {
  struct alignas(64) Line {
    float v[16];
  };
  thread_local std::vector<Line> buffer;
  if (std::int64_t(buffer.size()) * 16 < size) buffer.resize(std::size_t(size + 15) / 16);
  return buffer.front().v;
}

constexpr int kLanes = 16;  // partial sums of a margin: a loop the compiler vectorizes

/// Rows of at least this many values are long: their chains of additions are long enough alone.
/// Adjacent rows' loads interleaved slow the stream, so the AVX-512 loops sum long rows one
/// after the other, and the AVX2 loops four rows far apart at a time (long_rows_dot8). Shorter
/// rows are interleaved four adjacent rows at a time.
constexpr int kStreamedRow = 8 * kLanes;

/// Σ_c x[c]·w[c] in A, in kLanes interleaved partial sums added pairwise: the margin's
/// order everywhere (the device's team reduction aside).
template <class A, class S>
KOKKOS_INLINE_FUNCTION A row_dot(const S* x, const A* w, int n) {
  A part[kLanes] = {};
  int c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (int l = 0; l < kLanes; ++l) part[l] += precision::convert<A>(x[c + l]) * w[c + l];
  for (int l = 0; c + l < n; ++l) part[l] += precision::convert<A>(x[c + l]) * w[c + l];
  for (int half = kLanes / 2; half > 0; half /= 2)  // a fixed tree: short dependency chains
    for (int l = 0; l < half; ++l) part[l] += part[l + half];
  return part[0];
}

/// g[c] += x[c]·u for c < n: the one expression every gradient path uses.
template <class A, class S>
KOKKOS_INLINE_FUNCTION void add_row(const S* x, A u, A* g, int n) {
  for (int c = 0; c < n; ++c) g[c] += precision::convert<A>(x[c]) * u;
}

template <class F, int... K>
inline void with_constant_in(int v, F& fn, std::integer_sequence<int, K...>) {
  ((v == K ? (fn(std::integral_constant<int, K>{}), 0) : 0), ...);
}
/// fn(std::integral_constant<int, v>{}) for the run-time v in [0, N).
template <int N, class F>
inline void with_constant(int v, F&& fn) {
  with_constant_in(v, fn, std::make_integer_sequence<int, N>{});
}

#ifdef MINISGD_HOST_VECTORS

template <class A>
struct QuadOf;
template <>
struct QuadOf<float> {
  typedef float type __attribute__((vector_size(16)));
};
template <>
struct QuadOf<double> {
  typedef double type __attribute__((vector_size(32)));
};
/// Four lanes of A (with narrower registers the compiler splits it).
template <class A>
using Quad = typename QuadOf<A>::type;

/// x[0..4) in A (an out-parameter: a 32-byte vector return would warn of the AVX ABI).
template <class A, class S>
MINISGD_ROW_INLINE void load_quad(Quad<A>& v, const S* x) {
  if constexpr (std::is_same_v<S, A>) {
    std::memcpy(&v, x, sizeof v);
  } else {
    using precision::convert;
    v = Quad<A>{convert<A>(x[0]), convert<A>(x[1]), convert<A>(x[2]), convert<A>(x[3])};
  }
}

/// p[l] += x[l]·w[l] for the first kUsed ≤ 4 lanes.
template <int kUsed, class A, class S>
MINISGD_ROW_INLINE void add_products(Quad<A>& p, const S* x, const A* w) {
  if constexpr (kUsed == 4) {
    Quad<A> xq, wq;
    load_quad<A>(xq, x);
    load_quad<A>(wq, w);
    p += xq * wq;
  } else {
    for (int l = 0; l < kUsed; ++l) p[l] += precision::convert<A>(x[l]) * w[l];
  }
}

/// row_dot's partial sums for n ≡ kTail (mod kLanes), lanes 4q..4q+3 in one Quad each,
/// through the tree's first two levels: s[l] = (p[l] + p[l+8]) + (p[l+4] + p[l+12]).
template <int kTail, class A, class S>
MINISGD_ROW_INLINE void row_partials(const S* x, const A* w, int n, Quad<A>& s) {
  Quad<A> p[4];
  for (int q = 0; q < 4; ++q) p[q] = Quad<A>{};
  int c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (int q = 0; q < 4; ++q) add_products<4>(p[q], x + c + 4 * q, w + c + 4 * q);
  // the tail: lanes 0..kTail-1, four at a time, then one at a time
  if constexpr (kTail > 0) add_products<(kTail < 4 ? kTail : 4)>(p[0], x + c, w + c);
  if constexpr (kTail > 4) add_products<(kTail < 8 ? kTail - 4 : 4)>(p[1], x + c + 4, w + c + 4);
  if constexpr (kTail > 8) add_products<(kTail < 12 ? kTail - 8 : 4)>(p[2], x + c + 8, w + c + 8);
  if constexpr (kTail > 12) add_products<kTail - 12>(p[3], x + c + 12, w + c + 12);
  s = (p[0] + p[2]) + (p[1] + p[3]);
}

/// The tree's last two levels for four rows at once, z[r] = (s_r[0] + s_r[2]) + (s_r[1] + s_r[3]):
/// transposed, so they are vertical additions (GCC 12+ and Clang have __builtin_shufflevector).
#if defined(__clang__) || __GNUC__ >= 12
#define MINISGD_FOUR_ROW_TREE 1
template <class A>
MINISGD_ROW_INLINE void finish_four(const Quad<A>& s0, const Quad<A>& s1, const Quad<A>& s2,
                                    const Quad<A>& s3, A* z) {
  const Quad<A> ab = __builtin_shufflevector(s0, s1, 0, 4, 1, 5) +
                     __builtin_shufflevector(s0, s1, 2, 6, 3, 7);  // rows 0, 1: lanes 0+2, 1+3
  const Quad<A> cd =
      __builtin_shufflevector(s2, s3, 0, 4, 1, 5) + __builtin_shufflevector(s2, s3, 2, 6, 3, 7);
  const Quad<A> sums =
      __builtin_shufflevector(ab, cd, 0, 1, 4, 5) + __builtin_shufflevector(ab, cd, 2, 3, 6, 7);
  std::memcpy(z, &sums, sizeof sums);
}
#endif

/// rows_dot for n ≡ kTail (mod kLanes).
template <int kTail, class A, class S>
inline void rows_dot_tail(const S* x, std::int64_t stride, const A* w, int n, std::int64_t rows,
                          A* z) {
  std::int64_t i = 0;
#ifdef MINISGD_FOUR_ROW_TREE
  for (; i + 4 <= rows; i += 4) {
    Quad<A> s[4];
    for (int r = 0; r < 4; ++r) row_partials<kTail>(x + (i + r) * stride, w, n, s[r]);
    finish_four(s[0], s[1], s[2], s[3], z + i);
  }
#endif
  for (; i < rows; ++i) {
    Quad<A> s;
    row_partials<kTail>(x + i * stride, w, n, s);
    z[i] = (s[0] + s[2]) + (s[1] + s[3]);
  }
}

/// g[0..width) += Σ_{i < rows} x_i[c]·u_i in row order, width < 4·kQuads, the sums in registers.
template <int kQuads, class A, class S>
inline void add_rows_quads(const S* x0, std::int64_t stride, const A* u, std::int64_t rows, A* g,
                           int width) {
  Quad<A> acc[kQuads + 1];
  A last[4] = {};
  for (int q = 0; q < kQuads; ++q) load_quad<A>(acc[q], g + 4 * q);
  const int rest = width - 4 * kQuads;
  for (int c = 0; c < rest; ++c) last[c] = g[4 * kQuads + c];
  for (std::int64_t i = 0; i < rows; ++i) {
    const S* x = x0 + i * stride;
    for (int q = 0; q < kQuads; ++q) {
      Quad<A> xq;
      load_quad<A>(xq, x + 4 * q);
      acc[q] += xq * u[i];
    }
    add_row(x + 4 * kQuads, u[i], last, rest);
  }
  for (int q = 0; q < kQuads; ++q) std::memcpy(g + 4 * q, &acc[q], sizeof acc[q]);
  for (int c = 0; c < rest; ++c) g[4 * kQuads + c] = last[c];
}
#endif

#if defined(MINISGD_FOUR_ROW_TREE) && defined(__AVX2__) && defined(__F16C__) && \
    !defined(MINISGD_HOST_AVX512)
#define MINISGD_HOST_AVX 1
#include <immintrin.h>
// 256-bit registers without AVX-512 (AVX2 CPUs: AMD Zen 1-3, Intel client cores): rows in
// 8-lane fp32 vectors, where the 4-lane loops above would use half of each register; bf16 and
// fp16 widened in registers as they are loaded. A margin's 16 partial sums are two of them,
// added by row_dot's tree (its first level adds the two), the last three levels for eight rows
// together; a gradient block's sums are 8 columns a register.

/// The (A, S) pairs the 8-lane loops read directly.
template <class A, class S>
constexpr bool avx_rows = std::is_same_v<A, float> &&
                          (std::is_same_v<S, float> || std::is_same_v<S, precision::bf16> ||
                           std::is_same_v<S, precision::fp16>);

typedef float Oct __attribute__((vector_size(32)));

/// x[0..kUsed) as floats in the first lanes, +0 in the others: a partial sum starts at +0 and is
/// never −0, so lanes past a row's end (+0·+0 added) change nothing. bf16 is widened by a shift
/// and fp16 by vcvtph2ps: exactly, precision::convert's bits. The short loads are built in
/// registers (a masked load; 16-bit codes inserted), never through memory: a vector stored in
/// pieces and loaded whole stalls on the store forwarding.
template <int kUsed, class S>
MINISGD_ROW_INLINE Oct load_oct(const S* x) {
  if constexpr (std::is_same_v<S, float>) {
    if constexpr (kUsed == 8) {
      return _mm256_loadu_ps(x);
    } else {
      const __m256i lanes = _mm256_setr_epi32(
          0 < kUsed ? -1 : 0, 1 < kUsed ? -1 : 0, 2 < kUsed ? -1 : 0, 3 < kUsed ? -1 : 0,
          4 < kUsed ? -1 : 0, 5 < kUsed ? -1 : 0, 6 < kUsed ? -1 : 0, 7 < kUsed ? -1 : 0);
      return _mm256_maskload_ps(x, lanes);
    }
  } else {
    __m128i h;
    if constexpr (kUsed == 8) {
      h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x));
    } else {  // four codes, then two, then one
      constexpr int kFour = kUsed >= 4 ? 4 : 0, kTwo = kUsed - kFour >= 2 ? 2 : 0;
      if constexpr (kFour)
        h = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x));
      else
        h = _mm_setzero_si128();
      if constexpr (kTwo) {
        int pair;
        std::memcpy(&pair, x + kFour, sizeof pair);
        h = _mm_insert_epi32(h, pair, kFour / 2);
      }
      if constexpr (kUsed > kFour + kTwo) {
        std::uint16_t one;
        std::memcpy(&one, x + kFour + kTwo, sizeof one);
        h = _mm_insert_epi16(h, one, kFour + kTwo);
      }
    }
    if constexpr (std::is_same_v<S, precision::bf16>)
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    else
      return _mm256_cvtph_ps(h);
  }
}

/// One row's 16 partial sums for n ≡ kTail (mod kLanes), lanes l and l + 8 added (the tree's
/// first level).
template <int kTail, class S>
MINISGD_ROW_INLINE Oct row_halves8(const S* x, const float* w, int n) {
  Oct lo = {}, hi = {};
  int c = 0;
  for (; c + kLanes <= n; c += kLanes) {
    lo += load_oct<8>(x + c) * load_oct<8>(w + c);
    hi += load_oct<8>(x + c + 8) * load_oct<8>(w + c + 8);
  }
  if constexpr (kTail >= 8) {
    lo += load_oct<8>(x + c) * load_oct<8>(w + c);
    if constexpr (kTail > 8) hi += load_oct<kTail - 8>(x + c + 8) * load_oct<kTail - 8>(w + c + 8);
  } else if constexpr (kTail > 0) {
    lo += load_oct<kTail>(x + c) * load_oct<kTail>(w + c);
  }
  return lo + hi;
}

/// row_halves8 for four rows x[0..4) at once: eight independent chains, w loaded once.
template <int kTail, class S>
MINISGD_ROW_INLINE void four_row_halves8(const S* const* x, const float* w, int n, Oct* s) {
  Oct lo[4], hi[4];
  for (int r = 0; r < 4; ++r) lo[r] = hi[r] = Oct{};
  int c = 0;
  for (; c + kLanes <= n; c += kLanes) {
    const Oct wl = load_oct<8>(w + c), wh = load_oct<8>(w + c + 8);
    for (int r = 0; r < 4; ++r) {
      lo[r] += load_oct<8>(x[r] + c) * wl;
      hi[r] += load_oct<8>(x[r] + c + 8) * wh;
    }
  }
  if constexpr (kTail >= 8) {
    const Oct wl = load_oct<8>(w + c);
    for (int r = 0; r < 4; ++r) lo[r] += load_oct<8>(x[r] + c) * wl;
    if constexpr (kTail > 8) {
      const Oct wh = load_oct<kTail - 8>(w + c + 8);
      for (int r = 0; r < 4; ++r) hi[r] += load_oct<kTail - 8>(x[r] + c + 8) * wh;
    }
  } else if constexpr (kTail > 0) {
    const Oct wl = load_oct<kTail>(w + c);
    for (int r = 0; r < 4; ++r) lo[r] += load_oct<kTail>(x[r] + c) * wl;
  }
  for (int r = 0; r < 4; ++r) s[r] = lo[r] + hi[r];
}

/// The tree's last three levels (lane l += lane l + half, half = 4, 2, 1) for eight rows'
/// halves s[r], transposed into vertical additions: z[r] for r < 8.
MINISGD_ROW_INLINE void finish_eight(const Oct* s, float* z) {
  Oct a[4];  // half 4: lanes 0..3 of rows 2k | of rows 2k + 1
  for (int k = 0; k < 4; ++k)
    a[k] = __builtin_shufflevector(s[2 * k], s[2 * k + 1], 0, 1, 2, 3, 8, 9, 10, 11) +
           __builtin_shufflevector(s[2 * k], s[2 * k + 1], 4, 5, 6, 7, 12, 13, 14, 15);
  Oct b[2];  // half 2: lanes 0, 1 of rows 4m, 4m + 2 | of rows 4m + 1, 4m + 3
  for (int m = 0; m < 2; ++m)
    b[m] = __builtin_shufflevector(a[2 * m], a[2 * m + 1], 0, 1, 8, 9, 4, 5, 12, 13) +
           __builtin_shufflevector(a[2 * m], a[2 * m + 1], 2, 3, 10, 11, 6, 7, 14, 15);
  const Oct c =  // half 1: rows 0, 2, 4, 6 | 1, 3, 5, 7
      __builtin_shufflevector(b[0], b[1], 0, 2, 8, 10, 4, 6, 12, 14) +
      __builtin_shufflevector(b[0], b[1], 1, 3, 9, 11, 5, 7, 13, 15);
  const Oct sums = __builtin_shufflevector(c, c, 0, 4, 1, 5, 2, 6, 3, 7);
  std::memcpy(z, &sums, sizeof sums);
}

/// The tree's last three levels for one row's halves s: row_dot's sum.
MINISGD_ROW_INLINE float finish_one(const Oct& s) {
  return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
}

/// rows_dot8 for long rows (n ≥ kStreamedRow): the rows in four runs of consecutive rows, a row
/// of each run at a time (rows t, t + q, t + 2q, t + 3q). One core streams one run of rows
/// from memory at 8-10 GB/s on an AVX2 Zen 3 but four runs at once at 12-17 GB/s, more than
/// its triad: each run is a stream of its own for the prefetchers. (Four adjacent rows at a
/// time are one stream, and slower than a row at a time.)
template <int kTail, class S>
inline void long_rows_dot8(const S* x, std::int64_t stride, const float* w, int n,
                           std::int64_t rows, float* z) {
  // run j: rows [j·q, (j + 1)·q) below `rows`; for t < full all four runs have a row t
  const std::int64_t q = (rows + 3) / 4, full = rows - 3 * q;
  for (std::int64_t t = 0; t < q; ++t) {
    if (t < full) {
      const S* const xr[4] = {x + t * stride, x + (q + t) * stride, x + (2 * q + t) * stride,
                              x + (3 * q + t) * stride};
      Oct s[4];
      four_row_halves8<kTail>(xr, w, n, s);
      for (int r = 0; r < 4; ++r) z[r * q + t] = finish_one(s[r]);
    } else {
      for (std::int64_t i = t; i < 3 * q && i < rows; i += q)
        z[i] = finish_one(row_halves8<kTail>(x + i * stride, w, n));
    }
  }
}

/// rows_dot for n ≡ kTail (mod kLanes), eight rows at a time.
template <int kTail, class S>
inline void rows_dot8(const S* x, std::int64_t stride, const float* w, int n, std::int64_t rows,
                      float* z) {
  if (n >= kStreamedRow) return long_rows_dot8<kTail>(x, stride, w, n, rows, z);
  std::int64_t i = 0;
  for (; i + 8 <= rows; i += 8) {
    Oct s[8];
    for (int h = 0; h < 8; h += 4) {
      const S* const xr[4] = {x + (i + h) * stride, x + (i + h + 1) * stride,
                              x + (i + h + 2) * stride, x + (i + h + 3) * stride};
      four_row_halves8<kTail>(xr, w, n, s + h);
    }
    finish_eight(s, z + i);
  }
  for (; i < rows; ++i) z[i] = finish_one(row_halves8<kTail>(x + i * stride, w, n));
}

/// g[0..width) += Σ_{i < rows} x_i[c]·u_i in row order, width < 4·kQuads + 4: the sums of 8
/// columns a register, then 4 if kQuads is odd, then up to 3 one by one.
template <int kQuads, class S>
inline void add_rows8(const S* x0, std::int64_t stride, const float* u, std::int64_t rows, float* g,
                      int width) {
  constexpr int kOcts = kQuads / 2, kEnd = 8 * kOcts;
  Oct acc[kOcts + 1];
  Quad<float> quad = {};
  float last[4] = {};
  for (int o = 0; o < kOcts; ++o) std::memcpy(&acc[o], g + 8 * o, sizeof(Oct));
  if constexpr (kQuads % 2) std::memcpy(&quad, g + kEnd, sizeof quad);
  const int rest = width - 4 * kQuads;
  for (int c = 0; c < rest; ++c) last[c] = g[4 * kQuads + c];
  for (std::int64_t i = 0; i < rows; ++i) {
    const S* const x = x0 + i * stride;
    const float ui = u[i];
    for (int o = 0; o < kOcts; ++o) acc[o] += load_oct<8>(x + 8 * o) * ui;
    if constexpr (kQuads % 2) {
      const Oct xq = load_oct<4>(x + kEnd);
      quad += __builtin_shufflevector(xq, xq, 0, 1, 2, 3) * ui;
    }
    add_row(x + 4 * kQuads, ui, last, rest);
  }
  for (int o = 0; o < kOcts; ++o) std::memcpy(g + 8 * o, &acc[o], sizeof(Oct));
  if constexpr (kQuads % 2) std::memcpy(g + kEnd, &quad, sizeof quad);
  for (int c = 0; c < rest; ++c) g[4 * kQuads + c] = last[c];
}
#else
template <class A, class S>
constexpr bool avx_rows = false;
#endif

#ifdef MINISGD_HOST_AVX512
// AVX-512 (MINISGD_ARCH=native on a CPU that has it): the kLanes = 16 partial sums of a float
// margin are one register, and a row's tail is one masked load (the lanes past the row read
// as 0, and p + 0·0 = p: a partial sum starts at +0 and is never −0). bf16 and fp16 are
// widened in registers as they are loaded, so these loops read the stored bytes once.

/// The (A, S) pairs the AVX-512 loops read directly.
template <class A, class S>
constexpr bool avx512_rows = std::is_same_v<A, float> &&
                             (std::is_same_v<S, float> || std::is_same_v<S, precision::bf16> ||
                              std::is_same_v<S, precision::fp16>);

/// 16 stored 16-bit codes as floats, exactly (bf16: the bits shifted up; fp16: vcvtph2ps,
/// to_float's bits).
template <class S>
MINISGD_ROW_INLINE __m512 widen16(__m256i h) {
  if constexpr (std::is_same_v<S, precision::bf16>) {
    typedef unsigned int Words __attribute__((vector_size(64)));  // GCC 12 splits a convertvector
    return __m512(Words(_mm512_maskz_cvtepu16_epi32(__mmask16(0xFFFF), h)) << 16);
  } else {
    return _mm512_maskz_cvtph_ps(__mmask16(0xFFFF), h);  // no undefined source: GCC 12 warns
  }
}

/// x[0..16) as floats.
template <class S>
MINISGD_ROW_INLINE __m512 load16(const S* x) {
  if constexpr (std::is_same_v<S, float>)
    return _mm512_loadu_ps(x);
  else
    return widen16<S>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)));
}

/// The lanes of m of x[0..16) as floats, the others 0 (their memory is not touched).
template <class S>
MINISGD_ROW_INLINE __m512 load16(const S* x, __mmask16 m) {
  if constexpr (std::is_same_v<S, float>)
    return _mm512_maskz_loadu_ps(m, x);
  else
    return widen16<S>(_mm256_maskz_loadu_epi16(m, x));
}

/// row_dot's tree (lane l += lane l + half, half = 8, 4, 2, 1) for four rows' partial sums
/// side by side: z_r in lane r of the result.
MINISGD_ROW_INLINE __m128 finish_four16(__m512 p0, __m512 p1, __m512 p2, __m512 p3) {
  // half 8: lanes 0..7 of rows 0, 1 (of rows 2, 3)
  const __m512 s01 =
      __builtin_shufflevector(p0, p1, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
      __builtin_shufflevector(p0, p1, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  const __m512 s23 =
      __builtin_shufflevector(p2, p3, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
      __builtin_shufflevector(p2, p3, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  // half 4: lanes 0..3 of row r in block r
  const __m512 t =
      __builtin_shufflevector(s01, s23, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27) +
      __builtin_shufflevector(s01, s23, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
  const __m512 e =  // half 2
      t + __builtin_shufflevector(t, t, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
  const __m512 f =  // half 1
      e + __builtin_shufflevector(e, e, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
  return __builtin_shufflevector(f, f, 0, 4, 8, 12);
}

/// The partial sums of one row: full = n rounded down to kLanes, tail = the mask of the rest.
template <class S>
MINISGD_ROW_INLINE __m512 row_sums16(const S* x, const float* w, int full, __mmask16 tail) {
  __m512 p = _mm512_setzero_ps();
  for (int c = 0; c < full; c += kLanes)
    p = _mm512_add_ps(p, _mm512_mul_ps(load16(x + c), _mm512_loadu_ps(w + c)));
  if (tail)
    p = _mm512_add_ps(p,
                      _mm512_mul_ps(load16(x + full, tail), _mm512_maskz_loadu_ps(tail, w + full)));
  return p;
}

/// rows_dot, four rows at a time (the tree's last levels run for the four together).
template <class S>
inline void rows_dot16(const S* x, std::int64_t stride, const float* w, int n, std::int64_t rows,
                       float* z) {
  const int full = n - n % kLanes;
  const __mmask16 tail = __mmask16((1u << (n % kLanes)) - 1);
  for (std::int64_t i = 0; i < rows; i += 4) {
    const int valid = int(rows - i < 4 ? rows - i : 4);  // the missing rows repeat the last
    const S* xr[4];
    for (int r = 0; r < 4; ++r) xr[r] = x + (i + (r < valid ? r : valid - 1)) * stride;
    __m512 p[4];
    if (n >= kStreamedRow) {
      for (int r = 0; r < 4; ++r) p[r] = row_sums16(xr[r], w, full, tail);
    } else {  // four independent chains, one load of w for the four
      for (int r = 0; r < 4; ++r) p[r] = _mm512_setzero_ps();
      for (int c = 0; c < full; c += kLanes) {
        const __m512 wc = _mm512_loadu_ps(w + c);
        for (int r = 0; r < 4; ++r)
          p[r] = _mm512_add_ps(p[r], _mm512_mul_ps(load16(xr[r] + c), wc));
      }
      if (tail) {
        const __m512 wc = _mm512_maskz_loadu_ps(tail, w + full);
        for (int r = 0; r < 4; ++r)
          p[r] = _mm512_add_ps(p[r], _mm512_mul_ps(load16(xr[r] + full, tail), wc));
      }
    }
    _mm_mask_storeu_ps(z + i, __mmask8((1u << valid) - 1), finish_four16(p[0], p[1], p[2], p[3]));
  }
}

/// g[0..width) += Σ_{i < rows} x_i[c]·u_i in row order, 16·(kRegs − 1) < width ≤ 16·kRegs,
/// the sums in kRegs registers (the last one masked to the block's width).
template <int kRegs, class S>
inline void add_rows16(const S* x0, std::int64_t stride, const float* u, std::int64_t rows,
                       float* g, int width) {
  constexpr int kLast = 16 * (kRegs - 1);
  const __mmask16 last = __mmask16((1u << (width - kLast)) - 1);
  __m512 acc[kRegs];
  for (int q = 0; q + 1 < kRegs; ++q) acc[q] = _mm512_loadu_ps(g + 16 * q);
  acc[kRegs - 1] = _mm512_maskz_loadu_ps(last, g + kLast);
  for (std::int64_t i = 0; i < rows; ++i) {
    const S* x = x0 + i * stride;
    const __m512 ui = _mm512_set1_ps(u[i]);
    for (int q = 0; q + 1 < kRegs; ++q)
      acc[q] = _mm512_add_ps(acc[q], _mm512_mul_ps(load16(x + 16 * q), ui));
    acc[kRegs - 1] = _mm512_add_ps(acc[kRegs - 1], _mm512_mul_ps(load16(x + kLast, last), ui));
  }
  for (int q = 0; q + 1 < kRegs; ++q) _mm512_storeu_ps(g + 16 * q, acc[q]);
  _mm512_mask_storeu_ps(g + kLast, last, acc[kRegs - 1]);
}

/// add_rows16 for a full block of 128 bf16 columns: 64 bytes of codes are 32 columns, the
/// even ones (low halves, shifted up) and the odd ones (high halves, masked) in two registers,
/// no lane-crossing widening. The sums are kept in that order and stored back in column order.
inline void add_rows_bf16_128(const precision::bf16* x0, std::int64_t stride, const float* u,
                              std::int64_t rows, float* g) {
  typedef unsigned int Words __attribute__((vector_size(64)));
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512i low = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i high =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  __m512 acc[8];
  for (int k = 0; k < 4; ++k) {
    const __m512 a = _mm512_loadu_ps(g + 32 * k), b = _mm512_loadu_ps(g + 32 * k + 16);
    acc[2 * k] = _mm512_permutex2var_ps(a, even, b);
    acc[2 * k + 1] = _mm512_permutex2var_ps(a, odd, b);
  }
  for (std::int64_t i = 0; i < rows; ++i) {
    const precision::bf16* x = x0 + i * stride;
    const __m512 ui = _mm512_set1_ps(u[i]);
    for (int k = 0; k < 4; ++k) {
      const Words v = Words(_mm512_loadu_si512(x + 32 * k));
      acc[2 * k] = _mm512_add_ps(acc[2 * k], _mm512_mul_ps(__m512(v << 16), ui));
      acc[2 * k + 1] = _mm512_add_ps(acc[2 * k + 1], _mm512_mul_ps(__m512(v & 0xFFFF0000u), ui));
    }
  }
  for (int k = 0; k < 4; ++k) {
    _mm512_storeu_ps(g + 32 * k, _mm512_permutex2var_ps(acc[2 * k], low, acc[2 * k + 1]));
    _mm512_storeu_ps(g + 32 * k + 16, _mm512_permutex2var_ps(acc[2 * k], high, acc[2 * k + 1]));
  }
}
#else
template <class A, class S>
constexpr bool avx512_rows = false;
#endif

/// True where the host loops read S themselves; otherwise narrow storage is widened first.
template <class A, class S>
constexpr bool reads_directly =
    std::is_same_v<S, float> || std::is_same_v<S, double> || avx512_rows<A, S> || avx_rows<A, S>;

/// One prefetch per 4 KB page that starts in [begin, end). The hardware prefetchers stop at page
/// boundaries and start again only after misses in the new page, so a stream of rows stalls at
/// every page; a chunk ahead, this starts each page's translation and first line early (where
/// the pages are larger it costs a few instructions). More prefetches than that (every line of
/// the next chunk) made the SGD step slower.
inline void touch_pages(const void* begin, const void* end) {
#ifdef MINISGD_HOST_VECTORS
  constexpr std::uintptr_t kPage = 4096;
  for (std::uintptr_t a = (std::uintptr_t(begin) + kPage - 1) & ~(kPage - 1);
       a < std::uintptr_t(end); a += kPage)
    __builtin_prefetch(reinterpret_cast<const void*>(a));
#else
  (void)begin, (void)end;
#endif
}

/// A prefetch of the cache line at p (where the host loops are vectorized).
inline void prefetch_line(const void* p) {
#ifdef MINISGD_HOST_VECTORS
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

/// z[i] = row_dot(x_i, w, n) for `rows` rows of `stride` elements.
template <class A, class S>
inline void rows_dot(const S* x, std::int64_t stride, const A* w, int n, std::int64_t rows, A* z) {
#ifdef MINISGD_HOST_VECTORS
  if constexpr (avx512_rows<A, S>) {
#ifdef MINISGD_HOST_AVX512
    rows_dot16(x, stride, w, n, rows, z);
#endif
  } else if constexpr (avx_rows<A, S>) {
#ifdef MINISGD_HOST_AVX
    with_constant<kLanes>(
        n % kLanes, [&](auto tail) { rows_dot8<decltype(tail)::value>(x, stride, w, n, rows, z); });
#endif
  } else {
    with_constant<kLanes>(n % kLanes, [&](auto tail) {
      rows_dot_tail<decltype(tail)::value>(x, stride, w, n, rows, z);
    });
  }
#else
  for (std::int64_t i = 0; i < rows; ++i) z[i] = row_dot(x + i * stride, w, n);
#endif
}

/// g[0..width) += Σ_{i < rows} x_i[c]·u_i in row order, for a block narrower than kCols (any
/// width up to kCols on the AVX-512 and AVX2 paths).
template <int kCols, class A, class S>
inline void add_rows_narrow(const S* x0, std::int64_t stride, const A* u, std::int64_t rows, A* g,
                            int width) {
#ifdef MINISGD_HOST_VECTORS
  if constexpr (avx512_rows<A, S>) {
#ifdef MINISGD_HOST_AVX512
    if constexpr (std::is_same_v<S, precision::bf16> && kCols == 128)
      if (width == 128) return add_rows_bf16_128(x0, stride, u, rows, g);
    with_constant<kCols / 16 + 1>((width + 15) / 16, [&](auto regs) {
      if constexpr (decltype(regs)::value > 0)
        add_rows16<decltype(regs)::value>(x0, stride, u, rows, g, width);
    });
#endif
  } else if constexpr (avx_rows<A, S>) {
#ifdef MINISGD_HOST_AVX
    with_constant<kCols / 4 + 1>(width / 4, [&](auto quads) {
      add_rows8<decltype(quads)::value>(x0, stride, u, rows, g, width);
    });
#endif
  } else {
    with_constant<kCols / 4>(width / 4, [&](auto quads) {
      add_rows_quads<decltype(quads)::value>(x0, stride, u, rows, g, width);
    });
  }
#else
  for (std::int64_t i = 0; i < rows; ++i) add_row(x0 + i * stride, u[i], g, width);
#endif
}

}  // namespace minisgd::sgd_detail
