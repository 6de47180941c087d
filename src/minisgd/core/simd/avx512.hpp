#pragma once
// Vec<Avx512, float> (core/simd/vector.hpp has the contract): sixteen floats in a 512-bit
// register, so a margin's sixteen partial sums are one register; tails are masked loads (the
// lanes past a row read as +0, and a sum p + 0·0 is p: a partial sum starts at +0 and is never
// −0); bf16 and fp16 are widened in registers as they are loaded, exactly. Included only by
// the AVX-512 tier's translation unit, after core/simd/target_begin.hpp.
#include <immintrin.h>

#include <cstdint>

#include "minisgd/core/simd/vector.hpp"

#if MINISGD_SIMD_TARGET != 3
#error "core/simd/avx512.hpp: only for the AVX-512 tier (after core/simd/target_begin.hpp)"
#endif

namespace minisgd::simd {

template <>
struct Vec<Avx512, float> {
  using value_type = float;
  static constexpr Tier form = Tier::avx512;
  static constexpr int lanes = 16, tree_rows = 4;
  static constexpr bool masked_tails = true, widens_bf16 = true, widens_fp16 = true,
                        bf16_pairs = true;
  __m512 v;

  /// The first `count` lanes, 0 ≤ count ≤ 16.
  struct Mask {
    __mmask16 m;
  };
  static Mask mask(int count) { return {__mmask16((1u << count) - 1)}; }

  static Vec zero() { return {_mm512_setzero_ps()}; }
  static Vec broadcast(float a) { return {_mm512_set1_ps(a)}; }
  template <class F>
  static Vec generate(F f) {
    return {_mm512_setr_ps(f(0), f(1), f(2), f(3), f(4), f(5), f(6), f(7), f(8), f(9), f(10), f(11),
                           f(12), f(13), f(14), f(15))};
  }
  static Vec load(const float* p) { return {_mm512_loadu_ps(p)}; }
  static Vec load(const float* p, Mask m) { return {_mm512_maskz_loadu_ps(m.m, p)}; }
  template <int k>
  static Vec load(const float* p, Lanes<k>) {
    return load(p, mask(k));
  }
  static Vec load_bf16(const std::uint16_t* p) { return bf16(_mm256_loadu_si256(codes(p))); }
  static Vec load_bf16(const std::uint16_t* p, Mask m) {
    return bf16(_mm256_maskz_loadu_epi16(m.m, p));
  }
  template <int k>
  static Vec load_bf16(const std::uint16_t* p, Lanes<k>) {
    return load_bf16(p, mask(k));
  }
  static Vec load_fp16(const std::uint16_t* p) { return fp16(_mm256_loadu_si256(codes(p))); }
  static Vec load_fp16(const std::uint16_t* p, Mask m) {
    return fp16(_mm256_maskz_loadu_epi16(m.m, p));
  }
  template <int k>
  static Vec load_fp16(const std::uint16_t* p, Lanes<k>) {
    return load_fp16(p, mask(k));
  }
  void store(float* p) const { _mm512_storeu_ps(p, v); }
  void store(float* p, Mask m) const { _mm512_mask_storeu_ps(p, m.m, v); }
  template <int k>
  void store(float* p, Lanes<k>) const {
    store(p, mask(k));
  }

  /// Four rows side by side, the tree's levels as vertical additions of shuffled registers;
  /// one row the same with its register in all four places.
  template <int R>
  static void tree_sums(const Vec* s, float* z) {
    static_assert(R == 1 || R == 4, "tree_sums: one row or four");
    if constexpr (R == 1)
      z[0] = _mm_cvtss_f32(four_trees(s[0].v, s[0].v, s[0].v, s[0].v));
    else
      _mm_storeu_ps(z, four_trees(s[0].v, s[1].v, s[2].v, s[3].v));
  }

  /// 32 codes from p: the even columns (the low halves of their 32-bit words, shifted up) and
  /// the odd ones (the high halves, masked): no lane-crossing widening.
  static void load_bf16_pairs(const std::uint16_t* p, Vec& even, Vec& odd) {
    const Words w = Words(_mm512_loadu_si512(p));
    even.v = __m512(w << 16);
    odd.v = __m512(w & 0xFFFF0000u);
  }
  /// g[0..32) as load_bf16_pairs orders columns.
  static void deinterleave(const float* g, Vec& even, Vec& odd) {
    const __m512 a = _mm512_loadu_ps(g), b = _mm512_loadu_ps(g + 16);
    even.v = _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b);
    odd.v = _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), b);
  }
  /// deinterleave's inverse: g[0..32) in column order.
  static void interleave(float* g, const Vec& even, const Vec& odd) {
    _mm512_storeu_ps(
        g, _mm512_permutex2var_ps(
               even.v, _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23),
               odd.v));
    _mm512_storeu_ps(
        g + 16,
        _mm512_permutex2var_ps(
            even.v, _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31),
            odd.v));
  }

  /// None here: the caller's loop, compiled for AVX512BW, vectorizes with 32 → 16-bit truncation.
  static std::int64_t cast_bf16(const float*, std::uint16_t*, std::int64_t) { return 0; }

 private:
  typedef unsigned int Words __attribute__((vector_size(64)));

  static const __m256i* codes(const std::uint16_t* p) {
    return reinterpret_cast<const __m256i*>(p);
  }
  static Vec bf16(__m256i h) {  // (GCC 12 splits a __builtin_convertvector)
    return {__m512(Words(_mm512_maskz_cvtepu16_epi32(__mmask16(0xFFFF), h)) << 16)};
  }
  static Vec fp16(__m256i h) {  // (the maskz form: GCC 12 warns of an undefined source)
    return {_mm512_maskz_cvtph_ps(__mmask16(0xFFFF), h)};
  }

  /// row_dot's tree (lane l += lane l + half, half = 8, 4, 2, 1) for four rows: z_r in lane r.
  static __m128 four_trees(__m512 p0, __m512 p1, __m512 p2, __m512 p3) {
    // half 8: lanes 0..7 of rows 0, 1 (of rows 2, 3)
    const __m512 s01 =
        __builtin_shufflevector(p0, p1, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
        __builtin_shufflevector(p0, p1, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30,
                                31);
    const __m512 s23 =
        __builtin_shufflevector(p2, p3, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
        __builtin_shufflevector(p2, p3, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30,
                                31);
    // half 4: lanes 0..3 of row r in block r
    const __m512 t = __builtin_shufflevector(s01, s23, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24,
                                             25, 26, 27) +
                     __builtin_shufflevector(s01, s23, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23,
                                             28, 29, 30, 31);
    const __m512 e =  // half 2
        t + __builtin_shufflevector(t, t, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
    const __m512 f =  // half 1
        e + __builtin_shufflevector(e, e, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
    return __builtin_shufflevector(f, f, 0, 4, 8, 12);
  }
};

// (Not friends defined in the class: GCC does not give those the tier's target.)
inline Vec<Avx512, float> operator+(const Vec<Avx512, float>& a, const Vec<Avx512, float>& b) {
  return {_mm512_add_ps(a.v, b.v)};
}
inline Vec<Avx512, float> operator*(const Vec<Avx512, float>& a, const Vec<Avx512, float>& b) {
  return {_mm512_mul_ps(a.v, b.v)};
}

}  // namespace minisgd::simd
