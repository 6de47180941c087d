// The AVX-512 tier of the host loops (core/simd/tier.hpp): kernels/host/row_loops.hpp
// compiled for AVX512F, BW, DQ and VL, with the 512-bit vectors of core/simd/avx512.hpp.
#include "minisgd/kernels/host/tier_prelude.hpp"

#define MINISGD_SIMD_TARGET 3
#include "minisgd/core/simd/target_begin.hpp"
// (from here on: the tier's instructions)

#include "minisgd/core/simd/avx512.hpp"
#include "minisgd/kernels/host/gram_tiles.hpp"
#include "minisgd/kernels/host/row_loops.hpp"

namespace minisgd::host {
MINISGD_HOST_GRAM_TABLES(simd::Avx512)
MINISGD_HOST_TIER_TABLES(simd::Avx512)
}  // namespace minisgd::host

#include "minisgd/core/simd/target_end.hpp"
