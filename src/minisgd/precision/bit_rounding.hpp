#pragma once
// Rounding a float or double onto the grid of a narrower binary format, to nearest
// even or stochastically, and the counter-based random bits that drive the latter.

#include <cstdint>

#include <Random123/philox.h>
#if defined(__AVX512F__) && !defined(__CUDA_ARCH__)
#include <immintrin.h>
#endif

#include "minisgd/precision/bits.hpp"

namespace minisgd::precision {

// 32 random bits for stochastic rounding, a pure function of (seed, step, index):
// Philox4x32-10 with key = seed and counter = (index, step), so the bits an element
// gets do not depend on thread scheduling, backend or rank count.
KOKKOS_INLINE_FUNCTION uint32_t sr_bits(uint64_t seed, uint64_t step, uint64_t index) {
  philox4x32_ctr_t ctr = {
      {uint32_t(index), uint32_t(index >> 32), uint32_t(step), uint32_t(step >> 32)}};
  philox4x32_key_t key = {{uint32_t(seed), uint32_t(seed >> 32)}};
  return philox4x32(ctr, key).v[0];
}

#if defined(__AVX512F__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && !defined(__SYCL_DEVICE_ONLY__)
#define MINISGD_PHILOX_AVX512 1
/// sr_bits for sixteen consecutive indices first .. first + 15 at once, one 32-bit lane each:
/// Philox4x32-10 as Random123 computes it (the same bits), its 32 × 32 → 64-bit products made
/// with vpmulld (low halves) and vpmuludq on the even and the odd lanes (high halves).
__attribute__((always_inline)) inline void sr_bits16(uint64_t seed, uint64_t step, uint64_t first,
                                                     uint32_t* r) {
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i base = _mm512_set1_epi32(int(uint32_t(first)));
  __m512i c0 = _mm512_add_epi32(base, lane);
  // the high word of each index: the base's, plus a carry where the low word wrapped
  const __mmask16 carry = _mm512_cmplt_epu32_mask(c0, base);
  __m512i c1 =
      _mm512_mask_add_epi32(_mm512_set1_epi32(int(uint32_t(first >> 32))), carry,
                            _mm512_set1_epi32(int(uint32_t(first >> 32))), _mm512_set1_epi32(1));
  __m512i c2 = _mm512_set1_epi32(int(uint32_t(step)));
  __m512i c3 = _mm512_set1_epi32(int(uint32_t(step >> 32)));
  uint32_t k0 = uint32_t(seed), k1 = uint32_t(seed >> 32);
  const __m512i m0 = _mm512_set1_epi32(int(PHILOX_M4x32_0)),
                m1 = _mm512_set1_epi32(int(PHILOX_M4x32_1));
  const auto mulhi = [](__m512i a, __m512i m) {  // (maskz forms: GCC 12 warns of the others)
    const __mmask8 all = 0xFF;
    const __m512i even = _mm512_maskz_srli_epi64(all, _mm512_maskz_mul_epu32(all, a, m), 32);
    const __m512i odd = _mm512_maskz_mul_epu32(all, _mm512_maskz_srli_epi64(all, a, 32), m);
    return _mm512_mask_blend_epi32(__mmask16(0xAAAA), even, odd);
  };
  for (int round = 0; round < 10; ++round) {
    if (round > 0) k0 += PHILOX_W32_0, k1 += PHILOX_W32_1;
    const __m512i hi0 = mulhi(c0, m0), lo0 = _mm512_mullo_epi32(c0, m0);
    const __m512i hi1 = mulhi(c2, m1), lo1 = _mm512_mullo_epi32(c2, m1);
    const __m512i n0 = _mm512_ternarylogic_epi32(hi1, c1, _mm512_set1_epi32(int(k0)), 0x96);
    const __m512i n2 = _mm512_ternarylogic_epi32(hi0, c3, _mm512_set1_epi32(int(k1)), 0x96);
    c0 = n0, c1 = lo1, c2 = n2, c3 = lo0;
  }
  _mm512_storeu_si512(r, c0);
}
#endif

/// r[j] = sr_bits(seed, step, first + j) for j < N (sixteen lanes at a time where the host has
/// AVX-512, else one loop the compiler vectorizes as it can).
template <int N>
KOKKOS_INLINE_FUNCTION void sr_bits_run(uint64_t seed, uint64_t step, uint64_t first, uint32_t* r) {
#ifdef MINISGD_PHILOX_AVX512
  if constexpr (N % 16 == 0) {
    for (int j = 0; j < N; j += 16) sr_bits16(seed, step, first + uint64_t(j), r + j);
    return;
  }
#endif
  for (int j = 0; j < N; ++j) r[j] = sr_bits(seed, step, first + uint64_t(j));
}

namespace detail {

// A real number split for rounding: |x| = sig * 2^e2 with sig < 2^53, and
// |x| < 2^(lead+1) (lead = floor(log2 |x|) when x is normal).
struct Unpacked {
  uint64_t sig;
  int e2;
  int lead;
  bool negative, nan, inf;
};

KOKKOS_INLINE_FUNCTION Unpacked unpack(float x) {
  const uint32_t b = to_bits(x);
  const int ef = int(b >> 23) & 0xFF;
  const uint32_t frac = b & 0x7FFFFFu;
  return {ef ? frac | 0x800000u : frac, (ef ? ef : 1) - 150,    ef - 127, (b >> 31) != 0,
          ef == 0xFF && frac != 0,      ef == 0xFF && frac == 0};
}

KOKKOS_INLINE_FUNCTION Unpacked unpack(double x) {
  const uint64_t b = to_bits(x);
  const int ef = int(b >> 52) & 0x7FF;
  const uint64_t frac = b & 0xFFFFFFFFFFFFFull;
  return {ef ? frac | (1ull << 52) : frac, (ef ? ef : 1) - 1075,    ef - 1023, (b >> 63) != 0,
          ef == 0x7FF && frac != 0,        ef == 0x7FF && frac == 0};
}

constexpr uint32_t overflow_code = 0xFFFFFFFFu;

// Rounds a finite |x| onto the grid of a format with M fraction bits and minimum
// normal exponent emin (subnormals below 2^emin), with an unbounded exponent range.
// Returns the magnitude code (exponent field << M | fraction field), which is
// monotone in the value, so a round-up that carries into the next binade is just +1.
// Callers map codes beyond their largest finite one to inf or saturate. Every format
// here has max < 2^128, so larger values return overflow_code.
//
// Ties go to the even code (for M = 0, to the even exponent field). Stochastic
// rounding rounds up iff random < (dropped fraction of an ulp) * 2^32, the fraction
// kept to 32 bits (plus a sticky bit) when more are dropped: unbiased within the
// finite range, to within 2^-32 ulp.
KOKKOS_INLINE_FUNCTION uint32_t round_magnitude(const Unpacked& u, int M, int emin, bool stochastic,
                                                uint32_t random) {
  if (u.lead > 127) return overflow_code;
  const int qmin = emin - M;                           // log2 of the subnormal spacing
  if (u.lead < qmin - 32) return 0;                    // below 2^-32 of the smallest step
  const int qe = (u.lead > emin ? u.lead : emin) - M;  // log2 of the spacing at |x|
  int shift = qe - u.e2;                               // in [0, 84] after the checks above
  uint64_t sig = u.sig;
  if (shift > 32) {  // keep 32 bits below the rounding point, the rest as a sticky bit
    const int s = shift - 32;
    sig = (sig >> s) | uint64_t((sig & ((1ull << s) - 1)) != 0);
    shift = 32;
  }
  const uint64_t n = sig >> shift;
  const uint64_t rem = sig - (n << shift);
  const uint32_t code = (uint32_t(qe - qmin) << M) + uint32_t(n);
  bool up;
  if (stochastic) {
    up = random < (rem << (32 - shift));
  } else {
    const uint64_t half = (1ull << shift) >> 1;
    up = rem > half || (rem == half && rem != 0 && (code & 1u));
  }
  return code + uint32_t(up);
}

// Value of a finite magnitude code (see round_magnitude).
KOKKOS_INLINE_FUNCTION float magnitude_value(uint32_t mag, int M, int emin) {
  const uint32_t eb = mag >> M, mant = mag & ((1u << M) - 1);
  // Subnormals of a narrower exponent range are normal floats; everything else maps
  // field by field onto the float layout (with emin = -126 subnormals included). A select, not a
  // branch: whether a code is subnormal is the data's.
  const float subnormal = float(mant) * pow2(emin - M);
  const float field_by_field =
      float_from_bits(((eb + uint32_t(emin + 126)) << 23) | (mant << (23 - M)));
  return eb == 0 && emin > -126 ? subnormal : field_by_field;
}

KOKKOS_INLINE_FUNCTION float with_sign(float magnitude, bool negative) {
  return float_from_bits(to_bits(magnitude) | (uint32_t(negative) << 31));
}

}  // namespace detail
}  // namespace minisgd::precision
