#pragma once
// AVX-512 code for builds whose whole target has AVX512F (MINISGD_ARCH, docs/building.md),
// used inside the Kokkos kernels of the precision and compression layers, where a run-time
// tier (core/simd/tier.hpp) would need a translation unit per kernel: the sixteen-lane Philox
// of precision::sr_bits_run and the dithering's block of sixteen levels
// (compress::levels_of_block), from core/simd/dither_avx512.hpp. (The AVX-512 tier of the
// compressors' host loops uses them whatever the build's target.)
#if defined(__AVX512F__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && !defined(__SYCL_DEVICE_ONLY__)
#define MINISGD_FIXED_AVX512 1
#include "minisgd/core/simd/dither_avx512.hpp"
#endif
