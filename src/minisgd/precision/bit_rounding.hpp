#pragma once
// Rounding a float or double onto the grid of a narrower binary format, to nearest
// even or stochastically, and the counter-based random bits that drive the latter.

#include <cstdint>

#include "minisgd/core/random123.hpp"
#include "minisgd/core/simd/fixed_avx512.hpp"
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

/// r[j] = sr_bits(seed, step, first + j) for j < N (sixteen lanes at a time where the host has
/// AVX-512: simd::philox16; else one loop the compiler vectorizes as it can).
template <int N>
KOKKOS_INLINE_FUNCTION void sr_bits_run(uint64_t seed, uint64_t step, uint64_t first, uint32_t* r) {
#ifdef MINISGD_FIXED_AVX512
  if constexpr (N % 16 == 0) {
    for (int j = 0; j < N; j += 16) simd::philox16(seed, step, first + uint64_t(j), r + j);
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
