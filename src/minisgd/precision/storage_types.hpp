#pragma once
// Low-precision storage types that really occupy 2 or 1 bytes, and conversions
// between them, float and double (correctly rounded from either source, so a double
// is never rounded twice).
//
// Special values:
//   bf16      E8M7, the top 16 bits of an IEEE float (same layout as __nv_bfloat16);
//             max 3.3895e38, subnormals down to 2^-133, inf, NaN.
//   fp16      IEEE binary16 E5M10: max 65504, subnormals down to 2^-24, inf, NaN.
//   fp8_e5m2  IEEE-style E5M2 (bias 15): max 57344, subnormals down to 2^-16, inf, NaN.
//   fp8_e4m3  OCP "E4M3FN" (bias 7): no infinities, NaN = S.1111.111 only, so the top
//             binade reaches max 448 (the IEEE-style E4M3 of CustomFormat stops at 240).
//             Conversion saturates like __nv_fp8_e4m3 with __NV_SATFINITE: anything
//             beyond +-448, inf included, becomes +-448.
// Overflow in the IEEE-style types gives +-inf (IEEE: when the value rounded with an
// unbounded exponent exceeds max, e.g. fp16 65520 -> inf). NaN converts to a quiet
// NaN of the same sign (an fp16 NaN widened to float keeps its payload, a float NaN narrowed to
// bf16 the payload's top bits). Rounding is to nearest even, or stochastic (convert_sr /
// from_float_sr: round up with probability equal to the dropped fraction of an ulp).

#include <cstdint>
#include <type_traits>

#include "minisgd/precision/bit_rounding.hpp"
#include "minisgd/precision/bits.hpp"
#include "minisgd/precision/custom_format.hpp"

namespace minisgd::precision {

struct bf16 {
  uint16_t bits;
};
struct fp16 {
  uint16_t bits;
};
struct fp8_e4m3 {
  uint8_t bits;
};
struct fp8_e5m2 {
  uint8_t bits;
};

static_assert(sizeof(bf16) == 2 && sizeof(fp16) == 2, "16-bit types must take 2 bytes");
static_assert(sizeof(fp8_e4m3) == 1 && sizeof(fp8_e5m2) == 1, "8-bit types must take 1 byte");
static_assert(std::is_trivial_v<bf16> && std::is_trivial_v<fp16> && std::is_trivial_v<fp8_e4m3> &&
                  std::is_trivial_v<fp8_e5m2>,
              "storage types must be trivial so Views of them need no construction");

namespace detail {

// E4M3FN constants: bias 7 (emin -6), largest finite magnitude code 0x7E, NaN 0x7F.
constexpr int e4m3_emin = -6;
constexpr uint32_t e4m3_max = 0x7E, e4m3_nan = 0x7F;

template <class T>
struct ieee_layout;  // the IEEE-style types as CustomFormat instances
template <>
struct ieee_layout<bf16> {
  static constexpr int E = 8, M = 7;
};
template <>
struct ieee_layout<fp16> {
  static constexpr int E = 5, M = 10;
};
template <>
struct ieee_layout<fp8_e5m2> {
  static constexpr int E = 5, M = 2;
};
template <>
struct ieee_layout<float> {
  static constexpr int E = 8, M = 23;
};

template <class T>
KOKKOS_INLINE_FUNCTION T encode_as(const Unpacked& u, bool stochastic, uint32_t random) {
  if constexpr (std::is_same_v<T, fp8_e4m3>) {
    uint32_t mag = e4m3_nan;
    if (!u.nan) {
      mag = u.inf ? e4m3_max : round_magnitude(u, 3, e4m3_emin, stochastic, random);
      if (mag > e4m3_max) mag = e4m3_max;
    }
    return {uint8_t((uint32_t(u.negative) << 7) | mag)};
  } else {
    using L = ieee_layout<T>;
    const uint32_t code = encode(u, CustomFormat{L::E, L::M}, stochastic, random);
    if constexpr (std::is_same_v<T, float>)
      return float_from_bits(code);
    else
      return {static_cast<decltype(T::bits)>(code)};
  }
}

/// float → bf16 in integer steps. bf16 is a float's top half (same exponent range), so one
/// add rounds normal, subnormal and overflowing values alike: to nearest even by adding 0x7FFF
/// plus the kept half's lowest bit; stochastically by carrying when the random top 16 bits fall
/// below the dropped half (random < dropped · 2^16, the threshold encode_as uses). A NaN keeps
/// its sign and top payload bits and is made quiet, as AVX512-BF16's conversion does. Equal to
/// encode_as<bf16> for every other float, in a few operations compilers vectorize.
KOKKOS_INLINE_FUNCTION bf16 bf16_from_float(float x, bool stochastic, uint32_t random) {
  const uint32_t u = to_bits(x);
  const uint32_t up =
      stochastic ? uint32_t((random >> 16) < (u & 0xFFFFu)) << 16 : 0x7FFFu + ((u >> 16) & 1u);
  const bool nan = (u & 0x7FFFFFFFu) > 0x7F800000u;
  return {uint16_t(nan ? (u >> 16) | 0x40u : (u + up) >> 16)};
}

/// float → fp16, to nearest even, without a branch: a normal result rebiases the exponent and
/// rounds at bit 13 as bf16_from_float does at bit 16 (carrying into inf from 65520 up); a
/// subnormal one is |x| + 0.5 in float arithmetic, whose rounding to the float grid there (steps
/// of 2^-24) is fp16's, leaving the code in the low bits (a float subnormal |x| gives 0 whether
/// or not the hardware flushes it). A NaN gives the quiet NaN of its sign that encode_as gives;
/// equal to encode_as<fp16> throughout, in selects that compilers vectorize.
KOKKOS_INLINE_FUNCTION fp16 fp16_from_float(float x) {
  const uint32_t u = to_bits(x), a = u & 0x7FFFFFFFu, r = a - (112u << 23);
  const uint32_t normal = (r + 0xFFFu + ((r >> 13) & 1u)) >> 13;
  const uint32_t subnormal = to_bits(float_from_bits(a) + 0.5f) - 0x3F000000u;
  uint32_t code = a < 0x38800000u ? subnormal : normal;  // 2^-14: fp16's smallest normal
  code = a >= 0x477FF000u ? 0x7C00u : code;              // 65520 and up round to inf
  code = a > 0x7F800000u ? 0x7E00u : code;
  return {uint16_t(((u >> 16) & 0x8000u) | code)};
}

KOKKOS_INLINE_FUNCTION float widen(float x) { return x; }
KOKKOS_INLINE_FUNCTION double widen(double x) { return x; }
template <class T>
KOKKOS_INLINE_FUNCTION float widen(T x) {
  return to_float(x);
}

}  // namespace detail

KOKKOS_INLINE_FUNCTION float to_float(bf16 x) { return float_from_bits(uint32_t(x.bits) << 16); }
/// The value of an fp16 code, exactly (IEEE convertFormat: a NaN comes out quiet, sign and
/// payload kept, as F16C's vcvtph2ps gives it in the AVX2 and AVX-512 host tiers, core/simd/).
/// Integer operations and selects by mask that compilers vectorize: a normal code's exponent
/// and fraction moved into a float's, the exponent rebiased by 112 (by 224 for inf and NaN); a
/// subnormal f·2^−24 as (1 + f/1024)·2^−14 − 2^−14, both normal floats, so no step depends on
/// subnormal arithmetic (slow on some CPUs, flushed to zero on devices built for speed).
KOKKOS_INLINE_FUNCTION float to_float(fp16 x) {
  const uint32_t h = x.bits, em = h & 0x7FFFu;
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t subnormal = 0u - uint32_t(em < 0x400u), special = 0u - uint32_t(em >= 0x7C00u);
  const uint32_t quiet = (0u - uint32_t(em > 0x7C00u)) & 0x400000u;
  const uint32_t normal = ((em << 13) + (112u << 23) + (special & (112u << 23))) | quiet;
  const uint32_t tiny = to_bits(float_from_bits((em << 13) + (113u << 23)) - 0x1p-14f);
  return float_from_bits(sign | (tiny & subnormal) | (normal & ~subnormal));
}
KOKKOS_INLINE_FUNCTION float to_float(fp8_e5m2 x) { return decode(x.bits, CustomFormat{5, 2}); }
KOKKOS_INLINE_FUNCTION float to_float(fp8_e4m3 x) {
  const uint32_t mag = x.bits & 0x7Fu;
  const bool negative = x.bits >> 7;
  if (mag == detail::e4m3_nan) return float_from_bits((uint32_t(negative) << 31) | 0x7FC00000u);
  return detail::with_sign(detail::magnitude_value(mag, 3, detail::e4m3_emin), negative);
}
KOKKOS_INLINE_FUNCTION float to_float(float x) { return x; }
KOKKOS_INLINE_FUNCTION float to_float(double x) { return float(x); }

template <class T>
KOKKOS_INLINE_FUNCTION double to_double(T x) {
  return double(to_float(x));
}
KOKKOS_INLINE_FUNCTION double to_double(double x) { return x; }

// Round-to-nearest-even conversion between any two of bf16, fp16, fp8_e4m3, fp8_e5m2,
// float and double.
template <class To, class From>
KOKKOS_INLINE_FUNCTION To convert(From x) {
  if constexpr (std::is_same_v<To, From>)
    return x;
  else if constexpr (std::is_same_v<To, double> || std::is_same_v<To, float>)
    return To(detail::widen(x));
  else if constexpr (std::is_same_v<To, bf16> && !std::is_same_v<From, double>)
    return detail::bf16_from_float(detail::widen(x), false, 0);  // a double rounds once, below
  else if constexpr (std::is_same_v<To, fp16> && !std::is_same_v<From, double>)
    return detail::fp16_from_float(detail::widen(x));
  else
    return detail::encode_as<To>(detail::unpack(detail::widen(x)), false, 0);
}

// Stochastically rounded conversion driven by 32 random bits (see sr_bits).
template <class To, class From>
KOKKOS_INLINE_FUNCTION To convert_sr(From x, uint32_t random) {
  if constexpr (std::is_same_v<To, From>)
    return x;
  else if constexpr (std::is_same_v<To, double> ||
                     (std::is_same_v<To, float> && !std::is_same_v<From, double>))
    return To(detail::widen(x));  // exact
  else if constexpr (std::is_same_v<To, bf16> && !std::is_same_v<From, double>)
    return detail::bf16_from_float(detail::widen(x), true, random);
  else
    return detail::encode_as<To>(detail::unpack(detail::widen(x)), true, random);
}

template <class T>
KOKKOS_INLINE_FUNCTION T from_float(float x) {
  return convert<T>(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T from_float_sr(float x, uint32_t random) {
  return convert_sr<T>(x, random);
}

}  // namespace minisgd::precision
