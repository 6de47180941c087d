#pragma once
// What this build and this machine can do on a GPU, as reasons a request is refused
// (docs/gpu.md). Compiled in every build, with or without CUDA, and free of Kokkos, so the
// deck reader and the driver can ask before anything GPU-specific is touched. An empty
// string means "available".
#include <mpi.h>

#include <string>

namespace minisgd::gpu {

#ifdef MINISGD_HAVE_CUDA
inline constexpr bool kHaveCuda = true;
#else
inline constexpr bool kHaveCuda = false;
#endif
#ifdef MINISGD_HAVE_CUBLAS
inline constexpr bool kHaveCublas = true;
#else
inline constexpr bool kHaveCublas = false;
#endif
#ifdef MINISGD_HAVE_NCCL
inline constexpr bool kHaveNccl = true;
#else
inline constexpr bool kHaveNccl = false;
#endif

/// "Kokkos SERIAL" or "Kokkos CUDA;SERIAL with cuBLAS and NCCL": for messages.
std::string build_description();

/// Why this build cannot run NCCL / cuBLAS / CUDA-aware MPI ("" when it can).
std::string nccl_build_reason();
std::string cublas_build_reason();
std::string gpu_aware_mpi_build_reason();

/// Number of CUDA devices this process sees; on 0 or an error, `why` says so in the form
/// "no GPU visible (cudaGetDeviceCount = 0)" or "... failed: cudaErrorNoDevice (...)".
/// Always 0 ("built without CUDA") in a build without CUDA.
int visible_devices(std::string* why = nullptr);

/// Whether this MPI library is CUDA-aware, where the library can say (Open MPI's
/// MPIX_Query_cuda_support). "" when it is, or cannot tell; the reason when it is not.
std::string cuda_aware_mpi_runtime_reason();

/// One GPU per rank: the node-local rank (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)) modulo
/// the visible devices, handed to Kokkos through KOKKOS_DEVICE_ID. Call after MPI_Init and
/// before Kokkos::initialize. Does nothing without CUDA, without a device, or when the user
/// chose a device already (KOKKOS_DEVICE_ID, KOKKOS_NUM_DEVICES, KOKKOS_RAND_DEVICES, or a
/// --kokkos-device-id / --kokkos-num-devices / --kokkos-map-device-id-by argument).
/// Returns the device chosen, or -1.
int select_device_by_local_rank(MPI_Comm world, int argc, char** argv);

/// The NVIDIA kernel module's version in the text of /proc/driver/nvidia/version: the first
/// word after "Module" that starts with a digit ("NVRM version: NVIDIA UNIX x86_64 Kernel Module
/// 535.104.05 ..." and "... UNIX Open Kernel Module for x86_64  580.159.04 ..."); "" if none.
std::string nvidia_driver_version(const std::string& proc_text);

/// The GPU this process uses (the current CUDA device), for the report. `model` is empty
/// without CUDA or without a visible device; a field the machine cannot tell stays empty.
struct DeviceInfo {
  std::string model;               // "NVIDIA H100 80GB HBM3"
  std::string compute_capability;  // "9.0"
  std::string driver;              // the NVIDIA kernel module, "535.104.05" (Linux)
  std::string cuda_driver;         // the CUDA version the driver supports, "12.2"
  std::string cuda_runtime;        // the CUDA runtime minisgd runs with, "12.0"
  int visible = 0;                 // devices this process sees
};
DeviceInfo current_device();

}  // namespace minisgd::gpu
