#pragma once
// Rounding a value held in a wider arithmetic type (float or double) onto the grid of a
// run-time format: how knobs that have no compiled type of their own are emulated.
// Device-callable; copy it into kernels by value.
#include <cstdint>

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

/// The seed of rank `rank` for rounding values that differ per rank and are later added
/// across ranks (partial Gram and margins): with one seed per rank their stochastic rounding
/// errors are independent, so the variance of the sum grows like P, not P².
inline std::uint64_t rank_seed(std::uint64_t seed, int rank) {
  return seed ^ (0xD1B54A32D192ED03ull * (std::uint64_t(rank) + 1));
}

/// Typed rounding: round x (any compiled type) to the format, then store as To (exact when
/// To is the format's container).
template <class To, class From>
KOKKOS_INLINE_FUNCTION To round_into(const Rounder& r, From x, std::uint64_t step,
                                     std::uint64_t index) {
  if constexpr (std::is_same_v<From, double>) {
    return convert<To>(r(x, step, index));
  } else {
    return convert<To>(r(to_float(x), step, index));
  }
}

}  // namespace minisgd::precision
