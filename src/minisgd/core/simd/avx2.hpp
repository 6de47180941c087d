#pragma once
// Vec<Avx2, float> (core/simd/vector.hpp has the contract): eight floats in a 256-bit register,
// bf16 and fp16 widened in registers as they are loaded (bf16 by a shift, fp16 by vcvtph2ps:
// exactly, precision::convert's bits). No masked 16-bit loads: a tail's lanes are a
// compile-time count, its codes built in registers (a masked load of four, inserts of two and
// one), never through memory, where a vector stored in pieces and loaded whole would stall on
// the store forwarding. Included only by the AVX2 tier's translation unit, after
// core/simd/target_begin.hpp.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "minisgd/core/simd/vector.hpp"

#if MINISGD_SIMD_TARGET != 2
#error "core/simd/avx2.hpp: only for the AVX2 tier (after core/simd/target_begin.hpp)"
#endif

namespace minisgd::simd {

template <>
struct Vec<Avx2, float> {
  using value_type = float;
  static constexpr Tier form = Tier::avx2;
  static constexpr int lanes = 8, tree_rows = 8;
  static constexpr bool masked_tails = false, widens_bf16 = true, widens_fp16 = true,
                        bf16_pairs = false;
  __m256 v;

  static Vec zero() { return {_mm256_setzero_ps()}; }
  static Vec broadcast(float a) { return {_mm256_set1_ps(a)}; }
  template <class F>
  static Vec generate(F f) {
    return {_mm256_setr_ps(f(0), f(1), f(2), f(3), f(4), f(5), f(6), f(7))};
  }
  static Vec load(const float* p) { return {_mm256_loadu_ps(p)}; }
  template <int k>
  static Vec load(const float* p, Lanes<k>) {
    return {_mm256_maskload_ps(p, lane_mask<k>())};
  }
  static Vec load_bf16(const std::uint16_t* p) {
    return bf16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  template <int k>
  static Vec load_bf16(const std::uint16_t* p, Lanes<k>) {
    return bf16(codes<k>(p));
  }
  static Vec load_fp16(const std::uint16_t* p) {
    return {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))};
  }
  template <int k>
  static Vec load_fp16(const std::uint16_t* p, Lanes<k>) {
    return {_mm256_cvtph_ps(codes<k>(p))};
  }
  void store(float* p) const { _mm256_storeu_ps(p, v); }
  template <int k>
  void store(float* p, Lanes<k>) const {
    if constexpr (k == 4)
      _mm_storeu_ps(p, _mm256_castps256_ps128(v));
    else
      _mm256_maskstore_ps(p, lane_mask<k>(), v);
  }

  /// One row: the tree's three levels. Eight rows: transposed into vertical additions.
  template <int R>
  static void tree_sums(const Vec* s, float* z) {
    static_assert(R == 1 || R == 8, "tree_sums: one row or eight");
    if constexpr (R == 1) {
      const __m256 t = s[0].v;
      z[0] = ((t[0] + t[4]) + (t[2] + t[6])) + ((t[1] + t[5]) + (t[3] + t[7]));
    } else {
      __m256 a[4];  // half 4: lanes 0..3 of rows 2k | of rows 2k + 1
      for (int k = 0; k < 4; ++k)
        a[k] = __builtin_shufflevector(s[2 * k].v, s[2 * k + 1].v, 0, 1, 2, 3, 8, 9, 10, 11) +
               __builtin_shufflevector(s[2 * k].v, s[2 * k + 1].v, 4, 5, 6, 7, 12, 13, 14, 15);
      __m256 b[2];  // half 2: lanes 0, 1 of rows 4m, 4m + 2 | of rows 4m + 1, 4m + 3
      for (int m = 0; m < 2; ++m)
        b[m] = __builtin_shufflevector(a[2 * m], a[2 * m + 1], 0, 1, 8, 9, 4, 5, 12, 13) +
               __builtin_shufflevector(a[2 * m], a[2 * m + 1], 2, 3, 10, 11, 6, 7, 14, 15);
      const __m256 c =  // half 1: rows 0, 2, 4, 6 | 1, 3, 5, 7
          __builtin_shufflevector(b[0], b[1], 0, 2, 8, 10, 4, 6, 12, 14) +
          __builtin_shufflevector(b[0], b[1], 1, 3, 9, 11, 5, 7, 13, 15);
      _mm256_storeu_ps(z, __builtin_shufflevector(c, c, 0, 4, 1, 5, 2, 6, 3, 7));
    }
  }

  static std::int64_t cast_bf16(const float* x, std::uint16_t* y, std::int64_t n) {
    return cast_bf16_sse2(x, y, n);
  }

 private:
  template <int k>
  static __m256i lane_mask() {
    static_assert(0 < k && k < 8, "a part of a register");
    return _mm256_setr_epi32(0 < k ? -1 : 0, 1 < k ? -1 : 0, 2 < k ? -1 : 0, 3 < k ? -1 : 0,
                             4 < k ? -1 : 0, 5 < k ? -1 : 0, 6 < k ? -1 : 0, 7 < k ? -1 : 0);
  }
  /// p[0..k) in the low 16-bit lanes, 0 in the others: four codes, then two, then one.
  template <int k>
  static __m128i codes(const std::uint16_t* p) {
    static_assert(0 < k && k < 8, "a part of a register");
    constexpr int kFour = k >= 4 ? 4 : 0, kTwo = k - kFour >= 2 ? 2 : 0;
    __m128i h;
    if constexpr (kFour)
      h = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    else
      h = _mm_setzero_si128();
    if constexpr (kTwo) {
      int pair;
      std::memcpy(&pair, p + kFour, sizeof pair);
      h = _mm_insert_epi32(h, pair, kFour / 2);
    }
    if constexpr (k > kFour + kTwo) h = _mm_insert_epi16(h, p[kFour + kTwo], kFour + kTwo);
    return h;
  }
  static Vec bf16(__m128i h) {
    return {_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16))};
  }
};

// (Not friends defined in the class: GCC does not give those the tier's target.)
inline Vec<Avx2, float> operator+(const Vec<Avx2, float>& a, const Vec<Avx2, float>& b) {
  return {_mm256_add_ps(a.v, b.v)};
}
inline Vec<Avx2, float> operator*(const Vec<Avx2, float>& a, const Vec<Avx2, float>& b) {
  return {_mm256_mul_ps(a.v, b.v)};
}

}  // namespace minisgd::simd
