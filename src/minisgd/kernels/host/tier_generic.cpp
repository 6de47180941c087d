// The generic tier of the host loops (core/simd/tier.hpp): kernels/host/row_loops.hpp
// compiled for the build's own target, with the four-lane vectors of core/simd/vector.hpp.
#include "minisgd/kernels/host/tier_prelude.hpp"

#define MINISGD_SIMD_TARGET 1
#include "minisgd/core/simd/target_begin.hpp"
// (from here on: the tier's instructions)

#include "minisgd/kernels/host/gram_tiles.hpp"
#include "minisgd/kernels/host/row_loops.hpp"

namespace minisgd::host {
MINISGD_HOST_GRAM_TABLES(simd::Generic)
MINISGD_HOST_TIER_TABLES(simd::Generic)
}  // namespace minisgd::host

#include "minisgd/core/simd/target_end.hpp"
