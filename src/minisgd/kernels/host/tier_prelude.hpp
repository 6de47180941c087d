#pragma once
// Everything kernels/host/row_loops.hpp includes, for a tier's translation unit to include
// before core/simd/target_begin.hpp: these headers' functions keep the build's own target.
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>
#if (defined(__x86_64__) || defined(__i386__)) && !defined(__CUDACC__)
#include <immintrin.h>
#endif

#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/simd/tier.hpp"
#include "minisgd/core/simd/vector.hpp"
#include "minisgd/kernels/host/host_kernels.hpp"
#include "minisgd/kernels/host/scratch.hpp"
#include "minisgd/kernels/row_dot.hpp"
#include "minisgd/kernels/tuning.hpp"
#include "minisgd/models/loss.hpp"
#include "minisgd/precision/storage_types.hpp"
