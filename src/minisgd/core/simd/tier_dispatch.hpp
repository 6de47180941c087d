#pragma once
// MINISGD_DISPATCH(table, args...): inside a function of a `simd::Tier t`, returns
// table<Isa, args...>() for the tier t names, among the tiers this build compiles
// (cmake/MinisgdSimd.cmake defines MINISGD_SIMD_AVX2 and MINISGD_SIMD_AVX512), else the
// generic one. Each tier's tables come from its own translation unit (tier_*.cpp).
#include "minisgd/core/simd/tier.hpp"

#ifdef MINISGD_SIMD_AVX512
#define MINISGD_ON_AVX512(call)       \
  case ::minisgd::simd::Tier::avx512: \
    return call;
#else
#define MINISGD_ON_AVX512(call)
#endif
#ifdef MINISGD_SIMD_AVX2
#define MINISGD_ON_AVX2(call)       \
  case ::minisgd::simd::Tier::avx2: \
    return call;
#else
#define MINISGD_ON_AVX2(call)
#endif
#define MINISGD_DISPATCH(table, ...)                                   \
  switch (t) {                                                         \
    MINISGD_ON_AVX512((table<::minisgd::simd::Avx512, __VA_ARGS__>())) \
    MINISGD_ON_AVX2((table<::minisgd::simd::Avx2, __VA_ARGS__>()))     \
    default: return table<::minisgd::simd::Generic, __VA_ARGS__>();    \
  }
