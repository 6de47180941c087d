#include "minisgd/core/simd/tier_dispatch.hpp"
#include "minisgd/kernels/host/host_kernels.hpp"

namespace minisgd::host {

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
template <class In, class Acc>
GramTileKernel<In, Acc> gram_tile_kernel(simd::Tier t) {
  MINISGD_DISPATCH(tier_gram_tile_kernel, In, Acc)
}
template <Loss L>
LossValuesKernel loss_values_kernel(simd::Tier t){MINISGD_DISPATCH(tier_loss_values_kernel, L)}

#define MINISGD_ROW(X, S, A) template const RowKernels<S, A>& row_kernels<S, A>(simd::Tier);
#define MINISGD_STEP(X, L, S, A) \
  template const StepKernels<L, S, A>& step_kernels<L, S, A>(simd::Tier);
#define MINISGD_STEPS(X, L) MINISGD_HOST_STEP_TYPES(MINISGD_STEP, X, L)
#define MINISGD_CAST(X, S, In) template CastKernel<S, In> cast_kernel<S, In>(simd::Tier);
#define MINISGD_LOSS(X, L) template LossValuesKernel loss_values_kernel<L>(simd::Tier);
#define MINISGD_GRAM(X, In, Acc) \
  template GramTileKernel<In, Acc> gram_tile_kernel<In, Acc>(simd::Tier);
MINISGD_HOST_ROW_TYPES(MINISGD_ROW, _) MINISGD_HOST_LOSSES(MINISGD_STEPS, _)
    MINISGD_HOST_CAST_TYPES(MINISGD_CAST, _) MINISGD_HOST_LOSSES(MINISGD_LOSS, _)
        MINISGD_HOST_ROW_TYPES(MINISGD_GRAM, _)

}  // namespace minisgd::host
