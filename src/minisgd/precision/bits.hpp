#pragma once
// Bit-level views of IEEE floats, usable in host and device code.

#include <cstdint>

// Only the macro is needed; defining KOKKOS_INLINE_FUNCTION beforehand lets these
// headers be compiled without Kokkos (e.g. a plain CUDA translation unit).
#ifndef KOKKOS_INLINE_FUNCTION
#include <Kokkos_Macros.hpp>
#endif

namespace minisgd::precision {

// Union punning rather than std::memcpy (not device-callable) or std::bit_cast
// (C++20); both GCC and NVCC define its behaviour.
KOKKOS_INLINE_FUNCTION uint32_t to_bits(float x) {
  union {
    float f;
    uint32_t u;
  } c{x};
  return c.u;
}
KOKKOS_INLINE_FUNCTION uint64_t to_bits(double x) {
  union {
    double f;
    uint64_t u;
  } c{x};
  return c.u;
}
KOKKOS_INLINE_FUNCTION float float_from_bits(uint32_t u) {
  union {
    uint32_t u;
    float f;
  } c{u};
  return c.f;
}
KOKKOS_INLINE_FUNCTION double double_from_bits(uint64_t u) {
  union {
    uint64_t u;
    double f;
  } c{u};
  return c.f;
}

// 2^k as a float for -149 <= k <= 127 (subnormal below -126), built without libm.
KOKKOS_INLINE_FUNCTION float pow2(int k) {
  return float_from_bits(k >= -126 ? uint32_t(k + 127) << 23 : 1u << (k + 149));
}

}  // namespace minisgd::precision
