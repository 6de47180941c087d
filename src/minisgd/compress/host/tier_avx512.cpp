// The avx512 tier of the compressors' host loops (compress/host/codec_kernels.hpp):
// compress/host/codec_loops.hpp compiled for AVX512F, BW, DQ and VL, its dithering with the
// sixteen-lane Philox and levels of core/simd/dither_avx512.hpp.
#include "minisgd/compress/host/tier_prelude.hpp"

#define MINISGD_SIMD_TARGET 3
#include "minisgd/core/simd/target_begin.hpp"
// (from here on: the tier's instructions)

#include "minisgd/compress/host/codec_loops.hpp"

namespace minisgd::compress::codec {
MINISGD_CODEC_TIER_TABLES(simd::Avx512)
}  // namespace minisgd::compress::codec

#include "minisgd/core/simd/target_end.hpp"
