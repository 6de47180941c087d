// Closes the region core/simd/target_begin.hpp opened.
#ifndef MINISGD_SIMD_TARGET_OPEN
#error "core/simd/target_end.hpp without core/simd/target_begin.hpp"
#endif
#undef MINISGD_SIMD_TARGET_OPEN
#if MINISGD_SIMD_TARGET == 2 || MINISGD_SIMD_TARGET == 3
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
