#pragma once
// Emulated IEEE-style binary formats with E exponent and M fraction bits. Values are
// kept in a float and rounded after every operation; encode/decode give the
// (1+E+M)-bit codes that go on the wire.
//
// Semantics: bias 2^(E-1)-1, subnormals, exponent field all ones = inf (fraction 0)
// or NaN, so max = (2 - 2^-M) * 2^bias (E4M3: 240, unlike fp8_e4m3's 448; E5M2:
// 57344). Rounding overflow gives +-inf, or +-max when `saturate` is set (then inf
// inputs give +-max too). NaN stays NaN; with M = 0 there is no NaN code, so encode
// maps NaN to the inf code of its sign (round_to still returns NaN).

#include <cstdint>

#include "minisgd/precision/bit_rounding.hpp"
#include "minisgd/precision/bits.hpp"

namespace minisgd::precision {

struct CustomFormat {
  int E;                  // exponent bits, 2..8
  int M;                  // fraction bits, 0..23
  bool saturate = false;  // overflow gives +-max instead of +-inf

  KOKKOS_INLINE_FUNCTION constexpr bool valid() const {
    return E >= 2 && E <= 8 && M >= 0 && M <= 23;
  }
  KOKKOS_INLINE_FUNCTION constexpr int bits() const { return 1 + E + M; }
  KOKKOS_INLINE_FUNCTION constexpr int bias() const { return (1 << (E - 1)) - 1; }
  KOKKOS_INLINE_FUNCTION constexpr int emin() const { return 1 - bias(); }
  KOKKOS_INLINE_FUNCTION float max_value() const { return (2.0f - pow2(-M)) * pow2(bias()); }
  KOKKOS_INLINE_FUNCTION float min_normal() const { return pow2(emin()); }
  KOKKOS_INLINE_FUNCTION float min_subnormal() const { return pow2(emin() - M); }
  KOKKOS_INLINE_FUNCTION float unit_roundoff() const { return pow2(-M - 1); }
};

namespace detail {

KOKKOS_INLINE_FUNCTION uint32_t encode(const Unpacked& u, CustomFormat f, bool stochastic,
                                       uint32_t random) {
  const uint32_t inf = ((1u << f.E) - 1) << f.M;
  uint32_t mag;
  if (u.nan) {
    mag = inf | (f.M > 0 ? 1u << (f.M - 1) : 0u);  // canonical quiet NaN
  } else {
    mag = u.inf ? overflow_code : round_magnitude(u, f.M, f.emin(), stochastic, random);
    if (mag >= inf) mag = f.saturate ? inf - 1 : inf;
  }
  return (uint32_t(u.negative) << (f.E + f.M)) | mag;
}

/// detail::encode to nearest even for formats with E ≤ 7, in a few integer steps and one float
/// add, by selects that compilers vectorize (the general path rounds at a position it works out
/// per value, with branches on the value). A normal result rebiases the float's exponent and
/// rounds at bit 23 − M as bf16 rounding does at bit 16, carrying into the next binade (and up
/// to the inf code, mapped below); a subnormal one is |x| + 2^(emin − M + 23) in float
/// arithmetic, whose rounding there (steps of 2^(emin − M)) is the format's, leaving the code in
/// the low bits. With E ≤ 7 every float subnormal rounds to 0, so it gives 0 whether or not the
/// hardware flushes it.
KOKKOS_INLINE_FUNCTION uint32_t encode_nearest_narrow(float x, CustomFormat f) {
  const uint32_t u = to_bits(x), a = u & 0x7FFFFFFFu;
  const int drop = 23 - f.M;
  const uint32_t r = a - (uint32_t(127 - f.bias()) << 23);
  const uint32_t normal = (r + ((1u << (drop - 1)) - 1u) + ((r >> drop) & 1u)) >> drop;
  const uint32_t offset = uint32_t(f.emin() - f.M + 23 + 127) << 23;  // 2^(emin − M + 23)
  const uint32_t subnormal = to_bits(float_from_bits(a) + float_from_bits(offset)) - offset;
  const uint32_t inf = ((1u << f.E) - 1) << f.M;
  uint32_t mag = a < (uint32_t(f.emin() + 127) << 23) ? subnormal : normal;
  mag = mag >= inf ? (f.saturate ? inf - 1 : inf) : mag;                 // overflow, and inf itself
  mag = a > 0x7F800000u ? inf | (f.M > 0 ? 1u << (f.M - 1) : 0u) : mag;  // NaN
  return ((u >> 31) << (f.E + f.M)) | mag;
}

}  // namespace detail

// Code of x rounded to nearest even, by the few selects of detail::encode_nearest_narrow, which
// vectorize (kNarrow: only for formats with E ≤ 7), or the general path. A loop over values takes
// the choice once (compilers do not take it out of the loop).
template <bool kNarrow>
KOKKOS_INLINE_FUNCTION uint32_t encode_nearest(float x, CustomFormat f) {
  if constexpr (kNarrow)
    return detail::encode_nearest_narrow(x, f);
  else
    return detail::encode(detail::unpack(x), f, false, 0);
}

// Code of x rounded to nearest even (so encode(x) == encode(round_to(x))).
KOKKOS_INLINE_FUNCTION uint32_t encode(float x, CustomFormat f) {
  return f.E <= 7 ? encode_nearest<true>(x, f) : encode_nearest<false>(x, f);
}

// Code of x rounded stochastically with the given random bits.
KOKKOS_INLINE_FUNCTION uint32_t encode_sr(float x, CustomFormat f, uint32_t random) {
  return detail::encode(detail::unpack(x), f, true, random);
}

// Exact value of a code; NaN codes keep their fraction bits as payload. Both values are formed
// and one selected, so a loop of decodes has no branch on the codes.
KOKKOS_INLINE_FUNCTION float decode(uint32_t code, CustomFormat f) {
  const bool negative = (code >> (f.E + f.M)) & 1u;
  const uint32_t mag = code & ((1u << (f.E + f.M)) - 1);
  const uint32_t inf = ((1u << f.E) - 1) << f.M;
  const float special =
      float_from_bits((uint32_t(negative) << 31) | 0x7F800000u | ((mag - inf) << (23 - f.M)));
  const float finite = detail::with_sign(detail::magnitude_value(mag, f.M, f.emin()), negative);
  return mag >= inf ? special : finite;
}

KOKKOS_INLINE_FUNCTION float round_to(float x, CustomFormat f) {
  return x != x ? x : decode(encode(x, f), f);
}

KOKKOS_INLINE_FUNCTION float round_to_sr(float x, CustomFormat f, uint32_t random) {
  return x != x ? x : decode(encode_sr(x, f, random), f);
}

}  // namespace minisgd::precision
