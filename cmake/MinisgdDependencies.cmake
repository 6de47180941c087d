# Finds every dependency and exposes each behind one stable target name, so the rest of
# the build is the same for Debian's Trilinos-packaged Kokkos 3.4 and a standalone Kokkos 4.x:
#   minisgd::kokkos  minisgd::kokkoskernels  minisgd::yaml  MPI::MPI_CXX  CLI11::CLI11
#   nlohmann_json::nlohmann_json  minisgd::random123

find_package(MPI REQUIRED COMPONENTS CXX)
find_package(Kokkos 3.4 REQUIRED)
find_package(KokkosKernels QUIET)

add_library(minisgd_kokkos INTERFACE)
add_library(minisgd_kokkoskernels INTERFACE)
if(TARGET Kokkos::kokkos AND NOT Kokkos_INCLUDE_DIRS MATCHES "trilinos")
  # Standalone Kokkos (3.x or 4.x): its exported targets are correct.
  target_link_libraries(minisgd_kokkos INTERFACE Kokkos::kokkos)
  if(TARGET Kokkos::kokkoskernels)
    target_link_libraries(minisgd_kokkoskernels INTERFACE Kokkos::kokkoskernels)
    set(MINISGD_HAVE_KOKKOSKERNELS ON)
  endif()
else()
  # Debian's TriBITS export: Kokkos::kokkos points at a non-existent /usr/lib/include and
  # there is no Kokkos::kokkoskernels target, so use the plain variables it sets.
  target_include_directories(minisgd_kokkos SYSTEM INTERFACE ${Kokkos_INCLUDE_DIRS})
  target_link_directories(minisgd_kokkos INTERFACE ${Kokkos_LIBRARY_DIRS})
  target_link_libraries(minisgd_kokkos INTERFACE ${Kokkos_LIBRARIES} ${Kokkos_TPL_LIBRARIES})
  if(KokkosKernels_FOUND)
    target_include_directories(minisgd_kokkoskernels SYSTEM INTERFACE ${KokkosKernels_INCLUDE_DIRS})
    target_link_directories(minisgd_kokkoskernels INTERFACE ${KokkosKernels_LIBRARY_DIRS})
    target_link_libraries(minisgd_kokkoskernels INTERFACE ${KokkosKernels_LIBRARIES}
                          ${KokkosKernels_TPL_LIBRARIES})
    set(MINISGD_HAVE_KOKKOSKERNELS ON)
  endif()
endif()
if(NOT MINISGD_HAVE_KOKKOSKERNELS)
  message(FATAL_ERROR "minisgd needs Kokkos Kernels (Debian: libtrilinos-kokkos-kernels-dev; "
                      "Spack: kokkos-kernels). Set KokkosKernels_DIR or CMAKE_PREFIX_PATH.")
endif()
target_link_libraries(minisgd_kokkoskernels INTERFACE minisgd_kokkos)
add_library(minisgd::kokkos ALIAS minisgd_kokkos)
add_library(minisgd::kokkoskernels ALIAS minisgd_kokkoskernels)

find_package(yaml-cpp REQUIRED)
add_library(minisgd_yaml INTERFACE)
if(TARGET yaml-cpp::yaml-cpp)        # yaml-cpp 0.8
  target_link_libraries(minisgd_yaml INTERFACE yaml-cpp::yaml-cpp)
else()                               # yaml-cpp 0.7
  target_link_libraries(minisgd_yaml INTERFACE yaml-cpp)
endif()
add_library(minisgd::yaml ALIAS minisgd_yaml)

find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3 REQUIRED)

# xxHash, header-only here (XXH_INLINE_ALL in data/feature_hash.cpp): data.hash_bits.
find_path(XXHASH_INCLUDE_DIR xxhash.h)
if(NOT XXHASH_INCLUDE_DIR)
  message(FATAL_ERROR "minisgd needs xxHash's header (Debian: libxxhash-dev; Spack: xxhash). "
                      "Set XXHASH_INCLUDE_DIR.")
endif()

# Random123 is header-only and ships no CMake config.
find_path(RANDOM123_INCLUDE_DIR Random123/philox.h REQUIRED)
add_library(minisgd_random123 INTERFACE)
target_include_directories(minisgd_random123 SYSTEM INTERFACE ${RANDOM123_INCLUDE_DIR})
add_library(minisgd::random123 ALIAS minisgd_random123)

# oneDNN (optional): bf16 Gram products on CPUs with AVX512-BF16. Debian's dnnl-config.cmake
# insists on OpenCL, so look for the header and library directly. Its OpenMP runtime is
# linked too, so minisgd can hand oneDNN as many threads as Kokkos has.
option(MINISGD_ENABLE_DNNL "Use oneDNN for bf16 Gram products when it is found" ON)
set(MINISGD_HAVE_DNNL OFF)
if(MINISGD_ENABLE_DNNL)
  find_path(DNNL_INCLUDE_DIR dnnl.hpp)
  find_library(DNNL_LIBRARY dnnl)
  if(DNNL_INCLUDE_DIR AND DNNL_LIBRARY)
    find_package(OpenMP COMPONENTS CXX QUIET)
    set(MINISGD_HAVE_DNNL ON)
    message(STATUS "oneDNN: ${DNNL_LIBRARY} (bf16 Gram products)")
  else()
    message(STATUS "oneDNN not found (Debian: libdnnl-dev; or set DNNL_INCLUDE_DIR and "
                   "DNNL_LIBRARY): bf16 Gram products use the portable team kernel")
  endif()
else()
  message(STATUS "oneDNN: off (MINISGD_ENABLE_DNNL=OFF): bf16 Gram products use the portable team kernel")
endif()

# Optional cuBLAS and NCCL (Kokkos with CUDA only): minisgd_gpu, MINISGD_GPU_SOURCES.
include(MinisgdGpu)
