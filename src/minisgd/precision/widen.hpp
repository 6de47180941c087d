#pragma once
// Widening a run of stored values to float, for host kernels that read a row piece by piece:
// fp16 through F16C when the build targets a CPU that has it (MINISGD_ARCH, docs/building.md:
// eight values per vcvtph2ps), otherwise value by value through to_float, whose branch-free
// form compilers vectorize. Bit for bit to_float either way: F16C, like to_float, returns a
// NaN quiet with its sign and payload.
#include <cstdint>

#include "minisgd/precision/storage_types.hpp"

#if defined(__F16C__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
#include <immintrin.h>
#define MINISGD_WIDEN_F16C 1
#endif

namespace minisgd::precision {

/// True when widen(const fp16*, …) uses the F16C instructions.
constexpr bool widen_uses_f16c() {
#ifdef MINISGD_WIDEN_F16C
  return true;
#else
  return false;
#endif
}

/// out[i] = to_float(in[i]) for 0 ≤ i < n.
template <class S>
KOKKOS_INLINE_FUNCTION void widen(const S* in, float* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = to_float(in[i]);
}

KOKKOS_INLINE_FUNCTION void widen(const fp16* in, float* out, std::int64_t n) {
  std::int64_t i = 0;
#ifdef MINISGD_WIDEN_F16C
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
#endif
  for (; i < n; ++i) out[i] = to_float(in[i]);
}

}  // namespace minisgd::precision
