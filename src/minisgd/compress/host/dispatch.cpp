#include "minisgd/compress/host/codec_kernels.hpp"
#include "minisgd/core/simd/tier.hpp"

namespace minisgd::compress::codec {

// Each tier's tables come from its own translation unit (compress/host/tier_*.cpp), compiled
// in where cmake/MinisgdSimd.cmake defines MINISGD_SIMD_AVX2 and MINISGD_SIMD_AVX512.
#ifdef MINISGD_SIMD_AVX512
#define MINISGD_ON_AVX512(call) \
  case simd::Tier::avx512:      \
    return call;
#else
#define MINISGD_ON_AVX512(call)
#endif
#ifdef MINISGD_SIMD_AVX2
#define MINISGD_ON_AVX2(call) \
  case simd::Tier::avx2:      \
    return call;
#else
#define MINISGD_ON_AVX2(call)
#endif
#define MINISGD_DISPATCH(table, ...)                        \
  switch (t) {                                              \
    MINISGD_ON_AVX512((table<simd::Avx512, __VA_ARGS__>())) \
    MINISGD_ON_AVX2((table<simd::Avx2, __VA_ARGS__>()))     \
    default: return table<simd::Generic, __VA_ARGS__>();    \
  }

template <class T>
const CodecKernels<T>& codec_kernels(simd::Tier t){MINISGD_DISPATCH(tier_codec_kernels, T)}

ExpMergeKernel exp_merge_kernel(simd::Tier t) {
  switch (t) {
    MINISGD_ON_AVX512(tier_exp_merge_kernel<simd::Avx512>())
    MINISGD_ON_AVX2(tier_exp_merge_kernel<simd::Avx2>())
    default: return tier_exp_merge_kernel<simd::Generic>();
  }
}

template const CodecKernels<float>& codec_kernels<float>(simd::Tier);
template const CodecKernels<double>& codec_kernels<double>(simd::Tier);

}  // namespace minisgd::compress::codec
