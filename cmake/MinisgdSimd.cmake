# MINISGD_SIMD: which vector tiers of the host kernels are compiled in (core/simd/tier.hpp).
#   auto     (the default) every tier this compiler can build for this architecture: on
#            x86-64 with GCC 12+ or Clang, generic, AVX2 and AVX-512, the widest that the CPU
#            runs chosen at run time (within MINISGD_ARCH's target when that is set);
#   generic  the generic tier alone (what CI uses to test it on any CPU).
# A device build (CUDA, HIP, SYCL: cmake/MinisgdGpu.cmake) compiles the generic tier alone.
# Results: MINISGD_SIMD_SOURCES (the tiers' translation units), MINISGD_SIMD_OPTIONS (their
# compile options) and MINISGD_SIMD_DEFINITIONS (for the sources that choose a tier: which tiers
# are there); src/CMakeLists.txt applies them.
set(MINISGD_SIMD "auto" CACHE STRING "Host vector tiers: auto (every tier, chosen at run time) or generic")
set_property(CACHE MINISGD_SIMD PROPERTY STRINGS auto generic)
if(NOT MINISGD_SIMD MATCHES "^(auto|generic)$")
  message(FATAL_ERROR "MINISGD_SIMD=${MINISGD_SIMD}: auto or generic")
endif()

set(_simd_dir ${PROJECT_SOURCE_DIR}/src/minisgd/kernels/host)
set(_codec_dir ${PROJECT_SOURCE_DIR}/src/minisgd/compress/host)  # the compressors' loops
set(MINISGD_SIMD_SOURCES ${_simd_dir}/dispatch.cpp ${_simd_dir}/tier_generic.cpp
                         ${_codec_dir}/dispatch.cpp ${_codec_dir}/tier_generic.cpp)
set(MINISGD_SIMD_DEFINITIONS "")
set(MINISGD_SIMD_TIERS generic)
if(MINISGD_SIMD STREQUAL "auto" AND NOT MINISGD_DEVICE_BUILD AND
   CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND
   (CMAKE_CXX_COMPILER_ID MATCHES "Clang" OR
    (CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12)))
  list(APPEND MINISGD_SIMD_SOURCES ${_simd_dir}/tier_avx2.cpp ${_simd_dir}/tier_avx512.cpp
                                  ${_codec_dir}/tier_avx2.cpp ${_codec_dir}/tier_avx512.cpp)
  list(APPEND MINISGD_SIMD_DEFINITIONS MINISGD_SIMD_AVX2 MINISGD_SIMD_AVX512)
  list(APPEND MINISGD_SIMD_TIERS avx2 avx512)
endif()
if(MINISGD_ARCH_FLAGS)  # a fixed target: no tier beyond it runs (cmake/MinisgdArch.cmake)
  list(APPEND MINISGD_SIMD_DEFINITIONS MINISGD_SIMD_FIXED_TARGET)
endif()
# Every tier's sums must round as the generic tier's: no contraction into FMA, which the AVX2
# and AVX-512 tiers' targets have.
set(MINISGD_SIMD_OPTIONS "")
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  set(MINISGD_SIMD_OPTIONS -ffp-contract=off)
endif()
string(REPLACE ";" ", " _tiers "${MINISGD_SIMD_TIERS}")
message(STATUS "minisgd host vector tiers: ${_tiers} (MINISGD_SIMD=${MINISGD_SIMD})")
