#include "minisgd/app/capabilities.hpp"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#ifdef MINISGD_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#if defined(OPEN_MPI) && OPEN_MPI && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

#ifndef MINISGD_KOKKOS_DEVICES
#define MINISGD_KOKKOS_DEVICES "?"
#endif

namespace minisgd::gpu {

std::string build_description() {
  std::string s = std::string("Kokkos ") + MINISGD_KOKKOS_DEVICES;
  if (kHaveCublas && kHaveNccl)
    s += " with cuBLAS and NCCL";
  else if (kHaveCublas)
    s += " with cuBLAS, without NCCL";
  else if (kHaveNccl)
    s += " with NCCL, without cuBLAS";
  else if (kHaveCuda)
    s += " without cuBLAS and NCCL";
  return s;
}

std::string nccl_build_reason() {
  if (kHaveNccl) return "";
  return "needs a CUDA build with NCCL (this build: " + build_description() + ")";
}

std::string cublas_build_reason() {
  if (kHaveCublas) return "";
  return "needs a CUDA build with cuBLAS (this build: " + build_description() + ")";
}

std::string gpu_aware_mpi_build_reason() {
  if (kHaveCuda) return "";
  return "needs a CUDA build: device buffers exist only there (this build: " + build_description() +
         ")";
}

int visible_devices(std::string* why) {
#ifdef MINISGD_HAVE_CUDA
  int n = 0;
  const cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc != cudaSuccess) {
    if (why)
      *why = std::string("no GPU visible (cudaGetDeviceCount failed: ") + cudaGetErrorName(rc) +
             ": " + cudaGetErrorString(rc) + ")";
    cudaGetLastError();  // not sticky: clear it so later CUDA calls do not report it
    return 0;
  }
  if (n == 0 && why) *why = "no GPU visible (cudaGetDeviceCount = 0)";
  return n;
#else
  if (why) *why = "built without CUDA (this build: " + build_description() + ")";
  return 0;
#endif
}

std::string cuda_aware_mpi_runtime_reason() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  if (MPIX_Query_cuda_support() == 0)
    return "this Open MPI was built CUDA-aware but is not at run time "
           "(MPIX_Query_cuda_support() = 0)";
  return "";
#elif defined(MPIX_CUDA_AWARE_SUPPORT) && !MPIX_CUDA_AWARE_SUPPORT
  return "this Open MPI is not CUDA-aware (MPIX_CUDA_AWARE_SUPPORT = 0)";
#else
  return "";  // cannot tell: trust the user
#endif
}

namespace {
bool has_arg(int argc, char** argv, const char* prefix) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], prefix, std::strlen(prefix)) == 0) return true;
  return false;
}
}  // namespace

int select_device_by_local_rank(MPI_Comm world, int argc, char** argv) {
  if (!kHaveCuda) return -1;
  for (const char* v : {"KOKKOS_DEVICE_ID", "KOKKOS_NUM_DEVICES", "KOKKOS_RAND_DEVICES"})
    if (std::getenv(v)) return -1;
  for (const char* a : {"--kokkos-device-id", "--kokkos-num-devices", "--kokkos-map-device-id-by",
                        "--device-id", "--num-devices"})
    if (has_arg(argc, argv, a)) return -1;
  // Collective on `world` whatever happens below, so every rank takes part.
  MPI_Comm node = MPI_COMM_NULL;
  int local = 0;
  if (MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
  }
  const int n = visible_devices();
  if (n <= 0) return -1;
  const int device = local % n;
  setenv("KOKKOS_DEVICE_ID", std::to_string(device).c_str(), 1);
  return device;
}

#ifdef MINISGD_HAVE_CUDA
namespace {
std::string cuda_version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

/// The installed driver's version, "" where there is no /proc/driver/nvidia/version.
std::string installed_driver_version() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::stringstream text;
  text << f.rdbuf();
  return nvidia_driver_version(text.str());
}
}  // namespace
#endif

std::string nvidia_driver_version(const std::string& proc_text) {
  std::istringstream in(proc_text);
  std::string word;
  bool after_module = false;
  while (in >> word) {
    if (word == "Module")
      after_module = true;
    else if (after_module && std::isdigit(static_cast<unsigned char>(word[0])))
      return word;
  }
  return "";
}

DeviceInfo current_device() {
  DeviceInfo d;
#ifdef MINISGD_HAVE_CUDA
  d.visible = visible_devices();
  int device = 0;
  cudaDeviceProp p;
  if (d.visible <= 0 || cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&p, device) != cudaSuccess) {
    cudaGetLastError();  // not sticky: clear it
    return d;
  }
  d.model = p.name;
  d.compute_capability = std::to_string(p.major) + "." + std::to_string(p.minor);
  int v = 0;
  if (cudaDriverGetVersion(&v) == cudaSuccess) d.cuda_driver = cuda_version(v);
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) d.cuda_runtime = cuda_version(v);
  d.driver = installed_driver_version();
#endif
  return d;
}

}  // namespace minisgd::gpu
