#pragma once
// The AVX-512 code of the dithering: the sixteen-lane Philox of precision::sr_bits_run and a
// block of sixteen levels (compress::levels_of_block), each the bits of the scalar code it
// stands for (tests/precision/test_random_bits.cpp, tests/compress/test_dither_levels.cpp).
// Two users, one definition: core/simd/fixed_avx512.hpp, where the whole build targets
// AVX512F, and the AVX-512 tier of the compressors' host loops (compress/host/tier_avx512.cpp,
// after core/simd/target_begin.hpp, whose region compiles these for AVX-512). No translation
// unit compiles them for a target without AVX-512, so no other copy of these functions can
// clash with the tier's (core/simd/target_begin.hpp).
#if !defined(__AVX512F__) && MINISGD_SIMD_TARGET != 3
#error "core/simd/dither_avx512.hpp: only where the build targets AVX-512F, or in the AVX-512 tier"
#endif
#define MINISGD_DITHER_AVX512 1
#include <immintrin.h>

#include <cstdint>

#include "minisgd/core/random123.hpp"

namespace minisgd::simd {

namespace detail {
/// The high halves of the sixteen 32 × 32 → 64-bit products a·m (a function, not a lambda:
/// GCC compiles a lambda's function-pointer thunk for the build's target, not the tier's).
__attribute__((always_inline)) inline __m512i mulhi16(__m512i a, __m512i m) {
  const __mmask8 all = 0xFF;  // (maskz forms: GCC 12 warns of the others)
  const __m512i even = _mm512_maskz_srli_epi64(all, _mm512_maskz_mul_epu32(all, a, m), 32);
  const __m512i odd = _mm512_maskz_mul_epu32(all, _mm512_maskz_srli_epi64(all, a, 32), m);
  return _mm512_mask_blend_epi32(__mmask16(0xAAAA), even, odd);
}
}  // namespace detail

/// Philox4x32-10 with key = seed and counter = (index, step) for the sixteen consecutive
/// indices first .. first + 15, word 0 of each into r[0..16): Random123's bits, its 32 × 32 →
/// 64-bit products made with vpmulld (low halves) and vpmuludq on the even and the odd lanes
/// (high halves).
__attribute__((always_inline)) inline void philox16(std::uint64_t seed, std::uint64_t step,
                                                    std::uint64_t first, std::uint32_t* r) {
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i base = _mm512_set1_epi32(int(std::uint32_t(first)));
  __m512i c0 = _mm512_add_epi32(base, lane);
  // the high word of each index: the base's, plus a carry where the low word wrapped
  const __mmask16 carry = _mm512_cmplt_epu32_mask(c0, base);
  __m512i c1 = _mm512_mask_add_epi32(_mm512_set1_epi32(int(std::uint32_t(first >> 32))), carry,
                                     _mm512_set1_epi32(int(std::uint32_t(first >> 32))),
                                     _mm512_set1_epi32(1));
  __m512i c2 = _mm512_set1_epi32(int(std::uint32_t(step)));
  __m512i c3 = _mm512_set1_epi32(int(std::uint32_t(step >> 32)));
  std::uint32_t k0 = std::uint32_t(seed), k1 = std::uint32_t(seed >> 32);
  const __m512i m0 = _mm512_set1_epi32(int(PHILOX_M4x32_0)),
                m1 = _mm512_set1_epi32(int(PHILOX_M4x32_1));
  for (int round = 0; round < 10; ++round) {
    if (round > 0) k0 += PHILOX_W32_0, k1 += PHILOX_W32_1;
    const __m512i hi0 = detail::mulhi16(c0, m0), lo0 = _mm512_mullo_epi32(c0, m0);
    const __m512i hi1 = detail::mulhi16(c2, m1), lo1 = _mm512_mullo_epi32(c2, m1);
    const __m512i n0 = _mm512_ternarylogic_epi32(hi1, c1, _mm512_set1_epi32(int(k0)), 0x96);
    const __m512i n2 = _mm512_ternarylogic_epi32(hi0, c3, _mm512_set1_epi32(int(k1)), 0x96);
    c0 = n0, c1 = lo1, c2 = n2, c3 = lo0;
  }
  _mm512_storeu_si512(r, c0);
}

/// out[j] = the level ⌊y⌋ or ⌊y⌋ + 1 of y = double(x[j])·factor, up iff r[j] < (y − ⌊y⌋)·2^32,
/// clamped to ±levels, 0 for a NaN, for j < 16 (compress::stochastic_level's steps, in two
/// registers of eight doubles: GCC does not vectorize this mix of doubles and narrow codes).
/// T: float or double; Code: a 1-, 2- or 4-byte integer.
template <class T, class Code>
__attribute__((always_inline)) inline void stochastic_levels16(const T* x, double factor,
                                                               int levels, const std::uint32_t* r,
                                                               Code* out) {
  const __mmask8 all = 0xFF;  // (maskz forms throughout: GCC 12 warns of the others)
  const __m512d f = _mm512_set1_pd(factor), one = _mm512_set1_pd(1.0);
  const __m512d top = _mm512_set1_pd(levels), bottom = _mm512_set1_pd(-double(levels));
  __m256i q[2];
  for (int h = 0; h < 2; ++h) {
    __m512d v;
    if constexpr (sizeof(T) == 4)
      v = _mm512_maskz_cvtps_pd(all, _mm256_loadu_ps(x + 8 * h));
    else
      v = _mm512_loadu_pd(x + 8 * h);
    const __m512d y = _mm512_mul_pd(v, f);
    const __m512d lo =
        _mm512_maskz_roundscale_pd(all, y, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    const __m512d random = _mm512_maskz_cvtepu32_pd(
        all, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r + 8 * h)));
    const __mmask8 up = _mm512_cmp_pd_mask(
        random, _mm512_mul_pd(_mm512_sub_pd(y, lo), _mm512_set1_pd(4294967296.0)), _CMP_LT_OQ);
    __m512d s = _mm512_add_pd(lo, _mm512_maskz_mov_pd(up, one));  // lo + 1.0 or lo + 0.0
    s = _mm512_mask_mov_pd(s, _mm512_cmp_pd_mask(s, bottom, _CMP_LT_OQ), bottom);
    s = _mm512_mask_mov_pd(s, _mm512_cmp_pd_mask(s, top, _CMP_GT_OQ), top);
    s = _mm512_maskz_mov_pd(_mm512_cmp_pd_mask(y, y, _CMP_EQ_OQ), s);  // NaN: 0
    q[h] = _mm512_maskz_cvttpd_epi32(all, s);
  }
  const __m512i codes = _mm512_maskz_inserti64x4(0xFF, _mm512_castsi256_si512(q[0]), q[1], 1);
  if constexpr (sizeof(Code) == 1)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_maskz_cvtepi32_epi8(0xFFFF, codes));
  else if constexpr (sizeof(Code) == 2)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                        _mm512_maskz_cvtepi32_epi16(0xFFFF, codes));
  else
    _mm512_storeu_si512(out, codes);
}

}  // namespace minisgd::simd
