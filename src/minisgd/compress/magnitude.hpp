#pragma once
// The largest |value| of a gradient, as the compressors that scale by it take it.
#include <cstdint>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/precision/bits.hpp"

namespace minisgd::compress {

/// |x| as bits that order as the magnitudes do, a NaN taken as +∞ (so a scale from them is not
/// finite and the step says so): an integer maximum over them vectorizes, a float one that
/// keeps NaN does not.
KOKKOS_INLINE_FUNCTION std::uint32_t magnitude_bits(float x) {
  return kmin(precision::to_bits(x) & 0x7FFFFFFFu, 0x7F800000u);
}
KOKKOS_INLINE_FUNCTION std::uint64_t magnitude_bits(double x) {
  return kmin(precision::to_bits(x) & 0x7FFFFFFFFFFFFFFFull, 0x7FF0000000000000ull);
}
KOKKOS_INLINE_FUNCTION float magnitude_from_bits(std::uint32_t a) {
  return precision::float_from_bits(a);
}
KOKKOS_INLINE_FUNCTION double magnitude_from_bits(std::uint64_t a) {
  return precision::double_from_bits(a);
}

/// The bits of the largest |x[i]| of x[0, n) on the calling thread, NaN as +∞.
template <class T>
auto max_magnitude_bits_of(const T* x, std::size_t n) {
  decltype(magnitude_bits(T())) m = 0;
  for (std::size_t i = 0; i < n; ++i) m = kmax(m, magnitude_bits(x[i]));
  return m;
}
/// The largest |x[i]| of x[0, n) on the calling thread, NaN as +∞.
template <class T>
T max_magnitude_of(const T* x, std::size_t n) {
  return magnitude_from_bits(max_magnitude_bits_of(x, n));
}

}  // namespace minisgd::compress
