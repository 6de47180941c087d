#pragma once
// Elementary functions written so that a compiler vectorizes a loop that calls them: GCC
// calls std::exp one value at a time (it vectorizes it only under -ffast-math with libmvec),
// and keeps `c ? a : b` on floating-point values as a branch when an arm does arithmetic
// (that arithmetic might trap), which also stops the vectorizer. Plain arithmetic and bit
// operations only, so the same functions run on devices and give the same bits everywhere.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "minisgd/core/kokkos.hpp"

namespace minisgd {

namespace vector_math_detail {
template <class R>
using Bits = std::conditional_t<sizeof(R) == 4, std::uint32_t, std::uint64_t>;

template <class To, class From>
KOKKOS_INLINE_FUNCTION To bit_cast(From x) {
  static_assert(sizeof(To) == sizeof(From));
  To out;
#if defined(__HIP_DEVICE_COMPILE__)
  __builtin_memcpy(&out, &x, sizeof out);  // (HIP declares std::memcpy for the host only)
#else
  std::memcpy(&out, &x, sizeof out);
#endif
  return out;
}

/// 2^k for an integer-valued k with a normal result: its bits, built from k's bits after
/// adding 1.5·2^p (p = mantissa bits), which puts k in the mantissa's low bits.
template <class R>
KOKKOS_INLINE_FUNCTION R pow2(R k) {
  constexpr bool single = sizeof(R) == 4;
  constexpr R shift = single ? R(12582912.0f) : R(6755399441055744.0);  // 1.5·2^23, 1.5·2^52
  using B = Bits<R>;
  const B exponent = bit_cast<B>(R(k + shift)) - bit_cast<B>(shift) + B(single ? 127 : 1023);
  return bit_cast<R>(B(exponent << (single ? 23 : 52)));
}
}  // namespace vector_math_detail

/// c ? a : b, as a blend of bits (no branch, vectorizable).
template <class R>
KOKKOS_INLINE_FUNCTION R blend(bool c, R a, R b) {
  using B = vector_math_detail::Bits<R>;
  const B mask = c ? ~B(0) : B(0);
  const B bits =
      (vector_math_detail::bit_cast<B>(a) & mask) | (vector_math_detail::bit_cast<B>(b) & ~mask);
  return vector_math_detail::bit_cast<R>(bits);
}

namespace vector_math_detail {
/// e^x = e^r·2^k with k = round(x/ln2), for x already clamped into range: returns e^r (r =
/// x − k·ln2, ln2 in two parts so k·ln2_hi is exact) and k, by Cephes' polynomial (float) or
/// rational function (double).
template <class R>
KOKKOS_INLINE_FUNCTION R exp_reduced(R xc, R& k) {
  constexpr bool single = std::is_same_v<R, float>;
  constexpr R shift = single ? R(12582912.0f) : R(6755399441055744.0);  // rounds to integers
  constexpr R ln2_hi = single ? R(0.693359375f) : R(6.93145751953125E-1);
  constexpr R ln2_lo = single ? R(-2.12194440e-4f) : R(1.42860682030941723212E-6);
  k = (xc * R(1.44269504088896340736) + shift) - shift;  // round(x/ln2)
  const R r = (xc - k * ln2_hi) - k * ln2_lo;
  if constexpr (single) {
    R p = R(1.9875691500E-4f);
    p = p * r + R(1.3981999507E-3f);
    p = p * r + R(8.3334519073E-3f);
    p = p * r + R(4.1665795894E-2f);
    p = p * r + R(1.6666665459E-1f);
    p = p * r + R(5.0000001201E-1f);
    return (p * (r * r) + r) + R(1);
  } else {
    const R rr = r * r;
    const R p = r * ((R(1.26177193074810590878E-4) * rr + R(3.02994407707441961300E-2)) * rr +
                     R(9.99999999999999999910E-1));
    const R q = ((R(3.00198505138664455042E-6) * rr + R(2.52448340349684104192E-3)) * rr +
                 R(2.27265548208155028766E-1)) *
                    rr +
                R(2.00000000000000000009E0);
    return R(1) + R(2) * (p / (q - p));
  }
}

/// Below this, e^x is 0 in R (with a margin): clamping keeps k small and still gives 0.
template <class R>
constexpr R exp_lowest = sizeof(R) == 4 ? R(-104.0f) : R(-746.0);
}  // namespace vector_math_detail

/// e^x for R = float or double, within 1 ulp (float) and 2 ulp (double) of the correctly
/// rounded value, subnormal results included; +inf above the range, +0 below, NaN for NaN
/// (tests/kernels/test_sgd_host_rows.cpp). 2^k is applied as two factors so results down to
/// the subnormals are rounded once.
template <class R>
KOKKOS_INLINE_FUNCTION R exp_vectorizable(R x) {
  static_assert(std::is_same_v<R, float> || std::is_same_v<R, double>);
  constexpr bool single = std::is_same_v<R, float>;
  constexpr R lo = vector_math_detail::exp_lowest<R>, hi = single ? R(89.0f) : R(710.0);
  constexpr R shift = single ? R(12582912.0f) : R(6755399441055744.0);
  R xc = blend(x >= lo, x, lo);  // NaN becomes lo here and is restored at the end
  xc = blend(xc <= hi, xc, hi);
  R k;
  const R er = vector_math_detail::exp_reduced(xc, k);
  const R k1 = (k * R(0.5) + shift) - shift, k2 = k - k1;  // 2^k = 2^k1 · 2^k2, both normal
  const R e = er * vector_math_detail::pow2(k1) * vector_math_detail::pow2(k2);
  return blend(x == x, e, x);
}

/// e^x for x ≤ 0 (or NaN), the same bits as exp_vectorizable there, in fewer operations: no
/// upper clamp, and since k ∈ [−1076, 0], 2^k = 2^(k+64)·2^−64 with the first factor normal,
/// so e^r·2^(k+64) is exact and the one rounding is the same as exp_vectorizable's.
/// (The logistic loss's derivative needs only e^−|t|.)
template <class R>
KOKKOS_INLINE_FUNCTION R exp_nonpositive(R x) {
  static_assert(std::is_same_v<R, float> || std::is_same_v<R, double>);
  constexpr R lo = vector_math_detail::exp_lowest<R>;
  const R xc = blend(x >= lo, x, lo);  // NaN becomes lo here and is restored at the end
  R k;
  const R er = vector_math_detail::exp_reduced(xc, k);
  const R e = er * vector_math_detail::pow2(k + R(64)) * R(5.42101086242752217004E-20);  // 2^-64
  return blend(x == x, e, x);
}

/// log(1 + x) for x in [0, 1] (or NaN) in double, within 1 ulp of the correctly rounded value
/// (tests/kernels/test_sgd_host_rows.cpp): fdlibm's log1p for that range, without its branches.
/// u = 1 + x rounded and c = (1 + x − u)/u, its rounding error; u·2^−k = 1 + f exactly (k = 1
/// above √2); then log(1 + f) by the polynomial in s = f/(2 + f), plus k·ln2 + c. (The logistic
/// loss needs only log1p(e^−|t|).)
KOKKOS_INLINE_FUNCTION double log1p_unit(double x) {
  constexpr double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  const double u = 1.0 + x;
  const bool above = u > 1.41421356237309504880;  // k = 1
  const double k = blend(above, 1.0, 0.0);
  const double c = (x - (u - 1.0)) / u;  // u − 1 and the difference are exact for u ≤ 2
  const double f = blend(above, u * 0.5, u) - 1.0;
  const double hfsq = 0.5 * f * f, s = f / (2.0 + f), z = s * s;
  const double R =
      z * (6.666666666666735130e-01 +
           z * (3.999999999940941908e-01 +
                z * (2.857142874366239149e-01 +
                     z * (2.222219843214978396e-01 +
                          z * (1.818357216161805012e-01 +
                               z * (1.531383769920937332e-01 + z * 1.479819860511658591e-01))))));
  return k * ln2_hi - ((hfsq - (s * (hfsq + R) + (k * ln2_lo + c))) - f);
}

}  // namespace minisgd
