#pragma once
// The host kernels' vector type, after kokkos-kernels' Vector<SIMD<T>>
// (KokkosBatched_Vector_SIMD.hpp): Vec<Isa, A> holds Vec::lanes values of A (float or double)
// and has the few operations that the host kernels (kernels/host/row_loops.hpp) are written
// with, once for every tier (core/simd/tier.hpp). This file holds the generic form, four lanes
// in GNU vector extensions that the compiler maps to the registers it compiles for (two SSE2
// registers for four doubles, one AVX register); core/simd/avx2.hpp and core/simd/avx512.hpp
// specialise the float vectors with intrinsics. Intrinsics appear in src/ only in these files
// and core/simd/dither_avx512.hpp.
//
// Every operation gives the bits of the scalar code it stands for: + and * round once each
// (never fused: the tiers are compiled with -ffp-contract=off), widening is exact, and a tree
// sum adds the lanes in the margin's fixed order. Operations (static unless marked):
//   lanes, value_type              W values of A
//   form                           the tier whose loop shapes suit it (Tier::generic for this
//                                  file's four lanes, whatever instructions they compile to)
//   zero(), broadcast(a)
//   load(p), v.store(p)            W values of A at p, any alignment
//   load(p, part), v.store(p, part)
//                                  the first lanes of `part` only: the other lanes load as +0
//                                  and memory past the part is neither read nor written. part is
//                                  Lanes<k> (a compile-time count, 0 < k < W) on every tier, or
//                                  mask(k) (a run-time count, 0 ≤ k ≤ W) where masked_tails.
//   load_bf16(codes[, part]), load_fp16(codes[, part])
//                                  16-bit codes widened exactly to float (precision::convert's
//                                  bits), where widens_bf16 / widens_fp16
//   generate(f)                    the lanes f(0), …, f(W − 1), built in registers
//   a + b, a * b
//   tree_sums<R>(s, z)             z[r] = the sum of the lanes of s[r] in the fixed tree (lane l
//                                  += lane l + h for h = W/2, …, 1), for R = 1 or R = tree_rows
//   cast_bf16(x, codes, n)         the bf16 codes of x[0..k) (precision::convert's), for the k it
//                                  returns (≤ n); the caller converts the rest
// Where bf16_pairs (AVX-512): load_bf16_pairs(codes, even, odd) widens 2W codes into the
// even and the odd columns, deinterleave(g, even, odd) loads 2W floats so, interleave(g, even,
// odd) stores them back in column order.
//
// The generic form's functions are always inlined: a tier's translation unit compiles them
// into its own functions, for its own instructions.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "minisgd/core/simd/tier.hpp"

#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__) && \
    !defined(__HIP_DEVICE_COMPILE__) && !defined(__SYCL_DEVICE_ONLY__)
#define MINISGD_SIMD_INLINE __attribute__((always_inline)) inline
#define MINISGD_SIMD_GNU 1  // GNU vector extensions
#if defined(__clang__) || __GNUC__ >= 12
#define MINISGD_SIMD_SHUFFLE 1  // __builtin_shufflevector
#endif
#else
#define MINISGD_SIMD_INLINE inline
#endif
#if defined(__SSE2__) && !defined(__CUDACC__) && !defined(__HIP_DEVICE_COMPILE__)
#include <emmintrin.h>
#endif

namespace minisgd::simd {

/// A compile-time count of lanes.
template <int k>
using Lanes = std::integral_constant<int, k>;

#if defined(__SSE2__) && !defined(__CUDACC__) && !defined(__HIP_DEVICE_COMPILE__)
/// precision::convert<bf16> of four floats, the result in the high half of each 32-bit lane:
/// the same integer steps (+0x7FFF + lsb, or the quiet bit for a NaN) and select.
MINISGD_SIMD_INLINE __m128i bf16_high_halves(__m128i u) {
  const __m128i lsb = _mm_and_si128(_mm_srli_epi32(u, 16), _mm_set1_epi32(1));
  const __m128i rounded = _mm_add_epi32(_mm_add_epi32(u, _mm_set1_epi32(0x7FFF)), lsb);
  const __m128i nan =
      _mm_cmpgt_epi32(_mm_and_si128(u, _mm_set1_epi32(0x7FFFFFFF)), _mm_set1_epi32(0x7F800000));
  const __m128i quiet = _mm_or_si128(u, _mm_set1_epi32(0x00400000));
  return _mm_or_si128(_mm_and_si128(nan, quiet), _mm_andnot_si128(nan, rounded));
}

/// The bf16 codes of x[c] for c < n − n mod 8, eight at a time: SSE2 has no unsigned 32 →
/// 16-bit pack, so each high half is sign-extended (an arithmetic shift) and packed with signed
/// saturation, which then never saturates. Returns the count done.
MINISGD_SIMD_INLINE std::int64_t cast_bf16_sse2(const float* x, std::uint16_t* y, std::int64_t n) {
  std::int64_t c = 0;
  for (; c + 8 <= n; c += 8) {
    const __m128i lo = bf16_high_halves(_mm_castps_si128(_mm_loadu_ps(x + c)));
    const __m128i hi = bf16_high_halves(_mm_castps_si128(_mm_loadu_ps(x + c + 4)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + c),
                     _mm_packs_epi32(_mm_srai_epi32(lo, 16), _mm_srai_epi32(hi, 16)));
  }
  return c;
}
#define MINISGD_SIMD_SSE2_CAST 1
#endif

/// The generic form: four lanes of A. (For every Isa: the float vectors of the x86 tiers are
/// specialised; their double vectors are this, compiled for their instructions.)
template <class Isa, class A>
struct Vec {
  using value_type = A;
  static constexpr Tier form = Tier::generic;
  static constexpr int lanes = 4;
#ifdef MINISGD_SIMD_SHUFFLE
  static constexpr int tree_rows = 4;
#else
  static constexpr int tree_rows = 1;
#endif
  static constexpr bool masked_tails = false, widens_bf16 = false, widens_fp16 = false,
                        bf16_pairs = false;

#ifdef MINISGD_SIMD_GNU
  typedef A Native __attribute__((vector_size(4 * sizeof(A))));
#else
  struct Native {
    A l[4];
    MINISGD_SIMD_INLINE A& operator[](int i) { return l[i]; }
    MINISGD_SIMD_INLINE A operator[](int i) const { return l[i]; }
  };
#endif
  Native v;

  MINISGD_SIMD_INLINE static Vec zero() { return broadcast(A(0)); }
  MINISGD_SIMD_INLINE static Vec broadcast(A a) {
    return generate([a](int) { return a; });
  }
  template <class F>
  MINISGD_SIMD_INLINE static Vec generate(F f) {
#ifdef MINISGD_SIMD_GNU
    return {Native{f(0), f(1), f(2), f(3)}};
#else
    Vec r;
    for (int l = 0; l < 4; ++l) r.v[l] = f(l);
    return r;
#endif
  }
  MINISGD_SIMD_INLINE static Vec load(const A* p) {
    Vec r;
    std::memcpy(&r.v, p, sizeof r.v);
    return r;
  }
  template <int k>
  MINISGD_SIMD_INLINE static Vec load(const A* p, Lanes<k>) {
    return generate([p](int l) { return l < k ? p[l] : A(0); });
  }
  MINISGD_SIMD_INLINE void store(A* p) const { std::memcpy(p, &v, sizeof v); }
  template <int k>
  MINISGD_SIMD_INLINE void store(A* p, Lanes<k>) const {
    for (int l = 0; l < k; ++l) p[l] = v[l];
  }
  template <int R>
  MINISGD_SIMD_INLINE static void tree_sums(const Vec* s, A* z) {
    static_assert(R == 1 || R == tree_rows, "tree_sums: one row or tree_rows rows");
#ifdef MINISGD_SIMD_SHUFFLE
    if constexpr (R == 4) {  // transposed: the last two levels as vertical additions
      const Native ab = __builtin_shufflevector(s[0].v, s[1].v, 0, 4, 1, 5) +
                        __builtin_shufflevector(s[0].v, s[1].v, 2, 6, 3, 7);  // rows 0, 1
      const Native cd = __builtin_shufflevector(s[2].v, s[3].v, 0, 4, 1, 5) +
                        __builtin_shufflevector(s[2].v, s[3].v, 2, 6, 3, 7);  // rows 2, 3
      const Native sums =
          __builtin_shufflevector(ab, cd, 0, 1, 4, 5) + __builtin_shufflevector(ab, cd, 2, 3, 6, 7);
      std::memcpy(z, &sums, sizeof sums);
      return;
    }
#endif
    for (int r = 0; r < R; ++r) z[r] = (s[r].v[0] + s[r].v[2]) + (s[r].v[1] + s[r].v[3]);
  }

  MINISGD_SIMD_INLINE static std::int64_t cast_bf16(const float* x, std::uint16_t* y,
                                                    std::int64_t n) {
#ifdef MINISGD_SIMD_SSE2_CAST
    return cast_bf16_sse2(x, y, n);
#else
    (void)x, (void)y, (void)n;
    return 0;
#endif
  }
};

template <class Isa, class A>
MINISGD_SIMD_INLINE Vec<Isa, A> operator+(const Vec<Isa, A>& a, const Vec<Isa, A>& b) {
#ifdef MINISGD_SIMD_GNU
  return {a.v + b.v};
#else
  return Vec<Isa, A>::generate([&](int l) { return a.v[l] + b.v[l]; });
#endif
}
template <class Isa, class A>
MINISGD_SIMD_INLINE Vec<Isa, A> operator*(const Vec<Isa, A>& a, const Vec<Isa, A>& b) {
#ifdef MINISGD_SIMD_GNU
  return {a.v * b.v};
#else
  return Vec<Isa, A>::generate([&](int l) { return a.v[l] * b.v[l]; });
#endif
}

}  // namespace minisgd::simd
