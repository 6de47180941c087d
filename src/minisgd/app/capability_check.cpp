#include "minisgd/app/capability_check.hpp"

#include "minisgd/app/capabilities.hpp"
#include "minisgd/config/deck.hpp"

namespace minisgd {

void check_capabilities(const Config& c) {
  const std::string cublas = gpu::cublas_build_reason();
  if (c.precision.gram_engine == GramEngine::cublas && !cublas.empty())
    fail_key(c, "precision.gram_engine", "cublas " + cublas);
  if (c.precision.tf32 && !cublas.empty())
    fail_key(c, "precision.tf32", "TF32 Tensor Core Gram " + cublas);
  if (c.comm.backend == CommBackend::nccl && !gpu::nccl_build_reason().empty())
    fail_key(c, "comm.backend", "nccl " + gpu::nccl_build_reason());
  if (c.comm.gpu_aware && !gpu::gpu_aware_mpi_build_reason().empty())
    fail_key(c, "comm.gpu_aware", gpu::gpu_aware_mpi_build_reason());
  if (c.comm.gpu_aware && !gpu::cuda_aware_mpi_runtime_reason().empty())
    fail_key(c, "comm.gpu_aware", gpu::cuda_aware_mpi_runtime_reason());
}

}  // namespace minisgd
