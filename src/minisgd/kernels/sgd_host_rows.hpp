#pragma once
// The host side of the SGD step's inner loops, bit for bit the sums of sgd_kernels.hpp's
// row_dot and add_row, written so that short rows (tens of columns: HIGGS, SUSY) vectorize
// too: the length of a row's tail (n mod kLanes) and the width of a partial gradient block
// are compile-time constants (one instantiation each, chosen once per call), and with GCC or
// Clang the 16 partial sums of a margin are four 4-lane vectors. Without vector extensions
// (other compilers) the same functions fall back to the scalar loops, with the same bits.
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/precision/storage_types.hpp"

namespace minisgd::sgd_detail {

constexpr int kLanes = 16;  // partial sums of a margin: a loop the compiler vectorizes

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

#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDA_ARCH__) && \
    !defined(__HIP_DEVICE_COMPILE__) && !defined(__SYCL_DEVICE_ONLY__)
#define MINISGD_HOST_VECTORS 1

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
inline void load_quad(Quad<A>& v, const S* x) {
  if constexpr (std::is_same_v<S, A>) {
    std::memcpy(&v, x, sizeof v);
  } else {
    using precision::convert;
    v = Quad<A>{convert<A>(x[0]), convert<A>(x[1]), convert<A>(x[2]), convert<A>(x[3])};
  }
}

/// p[l] += x[l]·w[l] for the first kUsed ≤ 4 lanes.
template <int kUsed, class A, class S>
inline void add_products(Quad<A>& p, const S* x, const A* w) {
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
inline void row_partials(const S* x, const A* w, int n, Quad<A>& s) {
  Quad<A> p[4] = {};
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
inline void finish_four(const Quad<A>& s0, const Quad<A>& s1, const Quad<A>& s2, const Quad<A>& s3,
                        A* z) {
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

/// z[i] = row_dot(x_i, w, n) for `rows` rows of `stride` elements.
template <class A, class S>
inline void rows_dot(const S* x, std::int64_t stride, const A* w, int n, std::int64_t rows, A* z) {
#ifdef MINISGD_HOST_VECTORS
  with_constant<kLanes>(n % kLanes, [&](auto tail) {
    rows_dot_tail<decltype(tail)::value>(x, stride, w, n, rows, z);
  });
#else
  for (std::int64_t i = 0; i < rows; ++i) z[i] = row_dot(x + i * stride, w, n);
#endif
}

/// g[0..width) += Σ_{i < rows} x_i[c]·u_i in row order, for a block narrower than kCols.
template <int kCols, class A, class S>
inline void add_rows_narrow(const S* x0, std::int64_t stride, const A* u, std::int64_t rows, A* g,
                            int width) {
#ifdef MINISGD_HOST_VECTORS
  with_constant<kCols / 4>(width / 4, [&](auto quads) {
    add_rows_quads<decltype(quads)::value>(x0, stride, u, rows, g, width);
  });
#else
  for (std::int64_t i = 0; i < rows; ++i) add_row(x0 + i * stride, u[i], g, width);
#endif
}

}  // namespace minisgd::sgd_detail
