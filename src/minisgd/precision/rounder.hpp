#pragma once
// Rounding a value held in a wider arithmetic type (float or double) onto the grid of a
// run-time format: how knobs that have no compiled type of their own are emulated.
// Device-callable; copy it into kernels by value.
#include <cstdint>
#include <type_traits>

#include "minisgd/precision/format_spec.hpp"
#include "minisgd/precision/storage_types.hpp"

namespace minisgd::precision {

struct Rounder {
  Format format = Format::fp64;
  CustomFormat custom{8, 23};
  bool stochastic = false;
  std::uint64_t seed = 0;
  bool identity = true;  // the arithmetic type already is the format: nothing to do

  /// Rounds values of arithmetic type `arithmetic` (fp64 or fp32) to `f`; stochastic
  /// rounding draws its bits from sr_bits(seed, step, index).
  static Rounder to(const FormatSpec& f, Format arithmetic, bool stochastic, std::uint64_t seed) {
    Rounder r;
    r.format = f.format;
    r.custom = f.custom;
    r.stochastic = stochastic;
    r.seed = seed;
    r.identity =
        f.format == Format::fp64 || (f.format == Format::fp32 && arithmetic == Format::fp32);
    return r;
  }

  /// Round to nearest even.
  template <class R>
  KOKKOS_INLINE_FUNCTION R operator()(R x) const {
    if (identity) return x;
    switch (format) {
      case Format::fp64: return x;
      case Format::fp32: return R(float(x));
      case Format::bf16: return R(to_float(convert<bf16>(x)));
      case Format::fp16: return R(to_float(convert<fp16>(x)));
      case Format::fp8_e4m3: return R(to_float(convert<fp8_e4m3>(x)));
      case Format::fp8_e5m2: return R(to_float(convert<fp8_e5m2>(x)));
      case Format::custom: return R(round_to(float(x), custom));  // a double goes via float
    }
    return x;
  }

  /// Round to nearest, or stochastically with the bits keyed by (step, index).
  template <class R>
  KOKKOS_INLINE_FUNCTION R operator()(R x, std::uint64_t step, std::uint64_t index) const {
    if (identity || !stochastic) return (*this)(x);
    const std::uint32_t bits = sr_bits(seed, step, index);
    switch (format) {
      case Format::fp64: return x;
      case Format::fp32: return R(convert_sr<float>(x, bits));
      case Format::bf16: return R(to_float(convert_sr<bf16>(x, bits)));
      case Format::fp16: return R(to_float(convert_sr<fp16>(x, bits)));
      case Format::fp8_e4m3: return R(to_float(convert_sr<fp8_e4m3>(x, bits)));
      case Format::fp8_e5m2: return R(to_float(convert_sr<fp8_e5m2>(x, bits)));
      case Format::custom: return R(round_to_sr(float(x), custom, bits));
    }
    return x;
  }
};

/// Typed rounding, for kernels: the format and the mode are template parameters, so a kernel
/// instantiated with one runs no switch per element. with_rounding turns a Rounder into the
/// typed rounding that computes exactly what it computes.

/// No rounding: the arithmetic type already is the format.
struct Exact {
  template <class R>
  KOKKOS_INLINE_FUNCTION R operator()(R x) const {
    return x;
  }
  template <class R>
  KOKKOS_INLINE_FUNCTION R operator()(R x, std::uint64_t, std::uint64_t) const {
    return x;
  }
};

/// Rounding to the format of T (float, bf16, fp16, fp8_e4m3, fp8_e5m2, or CustomFormat: the
/// e<E>m<M> in `custom`); values rounded by (x, step, index) stochastically when Stochastic.
template <class T, bool Stochastic>
struct RoundTo {
  CustomFormat custom{8, 23};
  std::uint64_t seed = 0;

  /// Round to nearest even.
  template <class R>
  KOKKOS_INLINE_FUNCTION R operator()(R x) const {
    if constexpr (std::is_same_v<T, CustomFormat>)
      return R(round_to(float(x), custom));  // a double goes via float
    else if constexpr (std::is_same_v<T, float>)
      return R(float(x));
    else
      return R(to_float(convert<T>(x)));
  }

  /// Round to nearest, or stochastically with the bits keyed by (step, index).
  template <class R>
  KOKKOS_INLINE_FUNCTION R operator()(R x, std::uint64_t step, std::uint64_t index) const {
    if constexpr (!Stochastic) {
      return (*this)(x);
    } else {
      const std::uint32_t bits = sr_bits(seed, step, index);
      if constexpr (std::is_same_v<T, CustomFormat>)
        return R(round_to_sr(float(x), custom, bits));
      else if constexpr (std::is_same_v<T, float>)
        return R(convert_sr<float>(x, bits));
      else
        return R(to_float(convert_sr<T>(x, bits)));
    }
  }
};

namespace detail {
template <class T, bool AnyMode, class F>
void with_round_to(const Rounder& r, F& f) {
  if (AnyMode && r.stochastic)
    f(RoundTo<T, AnyMode>{r.custom, r.seed});
  else
    f(RoundTo<T, false>{r.custom, r.seed});
}
template <class A, bool AnyMode, class F>
void with_rounding(const Rounder& r, F& f) {
  if (r.identity) return f(Exact{});
  switch (r.format) {
    case Format::fp64: return f(Exact{});
    case Format::fp32:
      if constexpr (std::is_same_v<A, float>)
        return f(Exact{});  // a float rounded to fp32 is itself, stochastically or not
      else
        return with_round_to<float, AnyMode>(r, f);
    case Format::bf16: return with_round_to<bf16, AnyMode>(r, f);
    case Format::fp16: return with_round_to<fp16, AnyMode>(r, f);
    case Format::fp8_e4m3: return with_round_to<fp8_e4m3, AnyMode>(r, f);
    case Format::fp8_e5m2: return with_round_to<fp8_e5m2, AnyMode>(r, f);
    case Format::custom: return with_round_to<CustomFormat, AnyMode>(r, f);
  }
}
}  // namespace detail

/// Calls f(round) with the typed rounding (Exact or RoundTo<T, stochastic>) that rounds values
/// of arithmetic type A (double or float) exactly as r does.
template <class A, class F>
void with_rounding(const Rounder& r, F&& f) {
  detail::with_rounding<A, true>(r, f);
}

/// The same for kernels that only ever round to nearest (call round(x), never
/// round(x, step, index)): accumulations and the recurrence. Half the instantiations.
template <class A, class F>
void with_nearest_rounding(const Rounder& r, F&& f) {
  detail::with_rounding<A, false>(r, f);
}

/// The seed of rank `rank` for rounding values that differ per rank and are later added
/// across ranks (partial Gram and margins): with one seed per rank their stochastic rounding
/// errors are independent, so the variance of the sum grows like P, not P².
inline std::uint64_t rank_seed(std::uint64_t seed, int rank) {
  return seed ^ (0xD1B54A32D192ED03ull * (std::uint64_t(rank) + 1));
}

/// Typed rounding: round x (any compiled type) to the format, then store as To (exact when
/// To is the format's container).
template <class To, class Round, class From>
KOKKOS_INLINE_FUNCTION To round_into(const Round& r, From x, std::uint64_t step,
                                     std::uint64_t index) {
  if constexpr (std::is_same_v<From, double>) {
    return convert<To>(r(x, step, index));
  } else {
    return convert<To>(r(to_float(x), step, index));
  }
}

}  // namespace minisgd::precision
