#pragma once
// Everything compress/host/codec_loops.hpp includes, for a tier's translation unit to include
// before core/simd/target_begin.hpp: these headers' functions keep the build's own target (and
// inline into the tier's loops).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "minisgd/compress/aps_codec.hpp"
#include "minisgd/compress/dithering.hpp"
#include "minisgd/compress/host/codec_kernels.hpp"
#include "minisgd/compress/loco_codec.hpp"
#include "minisgd/compress/magnitude.hpp"
#include "minisgd/core/simd/tier.hpp"
#include "minisgd/precision/bit_rounding.hpp"
#include "minisgd/precision/storage_types.hpp"
