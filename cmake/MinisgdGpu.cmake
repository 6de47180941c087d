# The optional GPU libraries (docs/gpu.md), behind one INTERFACE target, minisgd_gpu:
#   MINISGD_ENABLE_CUBLAS  Tensor Core Gram through cuBLAS (cublasGemmEx)   -> MINISGD_HAVE_CUBLAS
#   MINISGD_ENABLE_NCCL    the NCCL communicator (comm.backend: nccl)       -> MINISGD_HAVE_NCCL
# Both default to ON when Kokkos has the CUDA backend and the library is found, OFF otherwise;
# asking for one explicitly where it cannot be built is a configure error. MINISGD_HAVE_CUDA
# is defined whenever Kokkos has CUDA. MINISGD_GPU_SOURCES lists the sources to compile.
#
# NCCL ships no CMake config: it is found with find_path/find_library (hints: NCCL_ROOT,
# the CUDA toolkit); NCCL_INCLUDE_DIR and NCCL_LIBRARY may be given directly.

set(MINISGD_HAVE_CUDA OFF)
if(Kokkos_ENABLE_CUDA OR "CUDA" IN_LIST Kokkos_DEVICES)
  set(MINISGD_HAVE_CUDA ON)
endif()
# MINISGD_DEVICE_BUILD: Kokkos runs the kernels on a device (CUDA, HIP or SYCL), so the host
# loops' wider vector tiers would never run (cmake/MinisgdSimd.cmake).
set(MINISGD_DEVICE_BUILD ${MINISGD_HAVE_CUDA})
foreach(_device HIP SYCL)
  if(Kokkos_ENABLE_${_device} OR _device IN_LIST Kokkos_DEVICES)
    set(MINISGD_DEVICE_BUILD ON)
  endif()
endforeach()

set(_cublas_default OFF)
set(_nccl_default OFF)
if(MINISGD_HAVE_CUDA)
  # Kokkos' CUDA toolkit: set CUDAToolkit_ROOT when several are installed.
  find_package(CUDAToolkit QUIET)
  if(TARGET CUDA::cublas)
    set(_cublas_default ON)
  endif()
  find_path(NCCL_INCLUDE_DIR nccl.h
            HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS}
            PATH_SUFFIXES include)
  find_library(NCCL_LIBRARY nccl
               HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR}
               PATH_SUFFIXES lib lib64)
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY AND TARGET CUDA::cudart)
    set(_nccl_default ON)
  endif()
endif()
option(MINISGD_ENABLE_CUBLAS "Gram through cuBLAS (needs Kokkos with CUDA)" ${_cublas_default})
option(MINISGD_ENABLE_NCCL "NCCL communicator (needs Kokkos with CUDA and NCCL)" ${_nccl_default})

add_library(minisgd_gpu INTERFACE)
add_library(minisgd::gpu ALIAS minisgd_gpu)
set(MINISGD_GPU_SOURCES minisgd/app/capabilities.cpp)

if(MINISGD_HAVE_CUDA)
  target_compile_definitions(minisgd_gpu INTERFACE MINISGD_HAVE_CUDA)
  # No multiply-add contraction in device code, as on the host (ISO C++ mode: GCC and Clang do
  # not contract; MinisgdArch says -ffp-contract=off outright). nvcc fuses a*b + c by default,
  # which skips a rounding the emulated formats count on and makes device results differ in
  # the last bit from the host's for the same order of operations (seen on an H200: the LoCo
  # error feedback and the CA-SGD gradient product against their host models).
  if(Kokkos_CXX_COMPILER_ID STREQUAL "NVIDIA")
    target_compile_options(minisgd_gpu INTERFACE --fmad=false)  # the form every nvcc_wrapper knows
  elseif(Kokkos_CXX_COMPILER_ID STREQUAL "Clang")
    target_compile_options(minisgd_gpu INTERFACE -ffp-contract=off)
  endif()
  if(TARGET CUDA::cudart)
    target_link_libraries(minisgd_gpu INTERFACE CUDA::cudart)
  endif()
endif()

if(MINISGD_ENABLE_CUBLAS)
  if(NOT MINISGD_HAVE_CUDA)
    message(FATAL_ERROR "MINISGD_ENABLE_CUBLAS needs Kokkos with the CUDA backend "
                        "(this Kokkos: ${Kokkos_DEVICES})")
  endif()
  if(NOT TARGET CUDA::cublas)
    message(FATAL_ERROR "MINISGD_ENABLE_CUBLAS: cuBLAS not found (set CUDAToolkit_ROOT)")
  endif()
  target_compile_definitions(minisgd_gpu INTERFACE MINISGD_HAVE_CUBLAS)
  target_link_libraries(minisgd_gpu INTERFACE CUDA::cublas)
  list(APPEND MINISGD_GPU_SOURCES minisgd/kernels/gram/cublas_gram.cpp minisgd/kernels/gram/cublas_kokkos.cpp)
endif()

if(MINISGD_ENABLE_NCCL)
  if(NOT MINISGD_HAVE_CUDA)
    message(FATAL_ERROR "MINISGD_ENABLE_NCCL needs Kokkos with the CUDA backend "
                        "(this Kokkos: ${Kokkos_DEVICES})")
  endif()
  if(NOT NCCL_INCLUDE_DIR OR NOT NCCL_LIBRARY)
    message(FATAL_ERROR "MINISGD_ENABLE_NCCL: NCCL not found (set NCCL_ROOT, or "
                        "NCCL_INCLUDE_DIR and NCCL_LIBRARY)")
  endif()
  target_compile_definitions(minisgd_gpu INTERFACE MINISGD_HAVE_NCCL)
  # (An installed package may not point into the source or build tree: NCCL found there is
  # for this build only.)
  target_include_directories(minisgd_gpu SYSTEM INTERFACE $<BUILD_INTERFACE:${NCCL_INCLUDE_DIR}>)
  string(FIND "${NCCL_INCLUDE_DIR}" "${PROJECT_SOURCE_DIR}/" _in_src)
  string(FIND "${NCCL_INCLUDE_DIR}" "${PROJECT_BINARY_DIR}/" _in_bin)
  if(_in_src EQUAL -1 AND _in_bin EQUAL -1)
    target_include_directories(minisgd_gpu SYSTEM INTERFACE $<INSTALL_INTERFACE:${NCCL_INCLUDE_DIR}>)
  endif()
  target_link_libraries(minisgd_gpu INTERFACE ${NCCL_LIBRARY})
  list(APPEND MINISGD_GPU_SOURCES minisgd/comm/nccl_communicator.cpp)
endif()

message(STATUS "minisgd GPU: Kokkos CUDA ${MINISGD_HAVE_CUDA}, cuBLAS ${MINISGD_ENABLE_CUBLAS}, "
               "NCCL ${MINISGD_ENABLE_NCCL}")
