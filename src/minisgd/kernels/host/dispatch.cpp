#include "minisgd/core/simd/tier.hpp"
#include "minisgd/kernels/host/host_kernels.hpp"

namespace minisgd::host {

// Each tier's tables come from its own translation unit (kernels/host/tier_*.cpp), compiled in
// where src/CMakeLists.txt defines MINISGD_SIMD_AVX2 and MINISGD_SIMD_AVX512.
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

template <class S, class A>
const RowKernels<S, A>& row_kernels(simd::Tier t) {
  MINISGD_DISPATCH(tier_row_kernels, S, A)
}
template <Loss L, class S, class A>
const StepKernels<L, S, A>& step_kernels(simd::Tier t) {
  MINISGD_DISPATCH(tier_step_kernels, L, S, A)
}
template <class S, class In>
CastKernel<S, In> cast_kernel(simd::Tier t) {
  MINISGD_DISPATCH(tier_cast_kernel, S, In)
}
template <Loss L>
LossValuesKernel loss_values_kernel(simd::Tier t){MINISGD_DISPATCH(tier_loss_values_kernel, L)}

#define MINISGD_ROW(X, S, A) template const RowKernels<S, A>& row_kernels<S, A>(simd::Tier);
#define MINISGD_STEP(X, L, S, A) \
  template const StepKernels<L, S, A>& step_kernels<L, S, A>(simd::Tier);
#define MINISGD_STEPS(X, L) MINISGD_HOST_STEP_TYPES(MINISGD_STEP, X, L)
#define MINISGD_CAST(X, S, In) template CastKernel<S, In> cast_kernel<S, In>(simd::Tier);
#define MINISGD_LOSS(X, L) template LossValuesKernel loss_values_kernel<L>(simd::Tier);
MINISGD_HOST_ROW_TYPES(MINISGD_ROW, _) MINISGD_HOST_LOSSES(MINISGD_STEPS, _)
    MINISGD_HOST_CAST_TYPES(MINISGD_CAST, _) MINISGD_HOST_LOSSES(MINISGD_LOSS, _)

}  // namespace minisgd::host
