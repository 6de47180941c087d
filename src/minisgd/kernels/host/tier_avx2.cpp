// The AVX2 tier of the host loops (core/simd/tier.hpp): kernels/host/row_loops.hpp compiled
// for AVX2 and F16C, with the 256-bit vectors of core/simd/avx2.hpp.
#include "minisgd/kernels/host/tier_prelude.hpp"

#define MINISGD_SIMD_TARGET 2
#include "minisgd/core/simd/target_begin.hpp"
// (from here on: the tier's instructions)

#include "minisgd/core/simd/avx2.hpp"
#include "minisgd/kernels/host/gram_tiles.hpp"
#include "minisgd/kernels/host/row_loops.hpp"

namespace minisgd::host {
MINISGD_HOST_GRAM_TABLES(simd::Avx2)
MINISGD_HOST_TIER_TABLES(simd::Avx2)
}  // namespace minisgd::host

#include "minisgd/core/simd/target_end.hpp"
