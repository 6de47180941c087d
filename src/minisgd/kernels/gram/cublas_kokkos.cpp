#include "minisgd/kernels/gram/cublas_kokkos.hpp"

#include <map>
#include <memory>
#include <mutex>

namespace minisgd::gpu {

CublasHandle& cublas_handle(const Kokkos::Cuda& exec) {
  // One handle per instance, i.e. per stream; freed before Kokkos tears CUDA down.
  static std::mutex mutex;
  static std::map<cudaStream_t, std::unique_ptr<CublasHandle>>* handles = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (!handles) {
    handles = new std::map<cudaStream_t, std::unique_ptr<CublasHandle>>();
    Kokkos::push_finalize_hook([] {
      std::lock_guard<std::mutex> l(mutex);
      delete handles;
      handles = nullptr;
    });
  }
  const cudaStream_t stream = exec.cuda_stream();
  auto& h = (*handles)[stream];
  if (!h) h = std::make_unique<CublasHandle>(stream);
  return *h;
}

}  // namespace minisgd::gpu
