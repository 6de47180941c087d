#include "minisgd/compress/host/codec_kernels.hpp"
#include "minisgd/core/simd/tier_dispatch.hpp"

namespace minisgd::compress::codec {

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
