// Driver of the host-side GPU check (ci/gpu_build_check.sh, part a). Links every entry point
// of the Kokkos-free GPU sources; run on a machine without a GPU, it checks that each one
// refuses with a reason. With a GPU it runs a 2×2 Gram and a one-rank allreduce.
#include <cublas_v2.h>
#include <mpi.h>

#include <cstdio>
#include <exception>
#include <string>

#include "minisgd/comm/nccl_communicator.hpp"
#include "minisgd/kernels/gram/cublas_gram.hpp"
#include "minisgd/app/capabilities.hpp"

namespace gpu = minisgd::gpu;

namespace {

int failures = 0;

template <class F>
void expect_refusal(const char* what, F&& f) {
  try {
    f();
    std::printf("FAIL %s: no GPU, yet no error\n", what);
    ++failures;
  } catch (const std::exception& e) {
    std::printf("ok   %s refused: %s\n", what, e.what());
  }
}

void with_gpu() {
  float* d = nullptr;
  if (cudaMalloc(&d, 8 * sizeof(float)) != cudaSuccess) throw std::runtime_error("cudaMalloc");
  const float y[4] = {1, 2, 3, 4};  // Y = [[1, 2], [3, 4]]: Y·Yᵀ = [[5, 11], [11, 25]]
  cudaMemcpy(d, y, sizeof y, cudaMemcpyHostToDevice);
  {
    gpu::CublasHandle h(nullptr);
    gpu::gram(h, gpu::GemmInput::fp32, gpu::GemmAccum::fp32, 2, 2, d, 2, d + 4, 2);
  }
  float g[4];
  cudaMemcpy(g, d + 4, sizeof g, cudaMemcpyDeviceToHost);
  const bool ok = g[0] == 5 && g[1] == 11 && g[2] == 11 && g[3] == 25;
  std::printf("%s Gram on the GPU: [%g %g; %g %g]\n", ok ? "ok  " : "FAIL", g[0], g[1], g[2], g[3]);
  failures += !ok;
  minisgd::comm::NcclCommunicator comm(MPI_COMM_WORLD, nullptr);
  double v = 1.5;
  comm.allreduce(&v, 1);  // a host pointer: staged through device memory
  std::printf("%s NCCL allreduce of a host value on %d rank(s): %g\n",
              v == 1.5 * comm.size() ? "ok  " : "FAIL", comm.size(), v);
  failures += v != 1.5 * comm.size();
  cudaFree(d);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::printf("minisgd GPU host-side check: CUDA runtime %d, cuBLAS %d, NCCL %d\n",
              CUDART_VERSION, CUBLAS_VER_MAJOR * 10000 + CUBLAS_VER_MINOR * 100 + CUBLAS_VER_PATCH,
              NCCL_VERSION_CODE);
  std::printf("build: %s\n", gpu::build_description().c_str());
  std::string why;
  const int devices = gpu::visible_devices(&why);
  try {
    if (devices > 0) {
      std::printf("%d GPU(s) visible: running the small GPU checks\n", devices);
      with_gpu();
    } else {
      std::printf("%s: checking that GPU entry points refuse cleanly\n", why.c_str());
      expect_refusal("cuBLAS handle", [] { gpu::CublasHandle h(nullptr); });
      expect_refusal("NCCL communicator",
                     [] { minisgd::comm::NcclCommunicator c(MPI_COMM_WORLD, nullptr); });
      std::string no;
      const bool refused = !gpu::cublas_supports(gpu::GemmInput::bf16, gpu::GemmAccum::fp64,
                                                 false, &no);
      std::printf("%s bf16 inputs with fp64 accumulation: %s\n", refused ? "ok  " : "FAIL",
                  no.c_str());
      failures += !refused;
    }
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    ++failures;
  }
  std::printf("%s\n", failures ? "host-side GPU check FAILED" : "host-side GPU check passed");
  MPI_Finalize();
  return failures ? 1 : 0;
}
