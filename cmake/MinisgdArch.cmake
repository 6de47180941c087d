# MINISGD_ARCH: the CPU the host code is compiled for (-march=<value>), e.g. `native` (the
# build machine), `znver4`, `sapphirerapids`, `x86-64-v3`. Empty (the default) or `none` (the
# Spack variant's default): the compiler's default target, portable to any CPU of the family
# (SSE2 on x86-64). It is a PUBLIC compile option of minisgd, so the tests, perf/ programs and
# downstream users of minisgd::minisgd compile minisgd's header kernels for the same CPU. In
# CUDA builds nvcc_wrapper hands it to the host compiler. Result: MINISGD_ARCH_FLAGS.
set(MINISGD_ARCH "" CACHE STRING
    "CPU architecture for -march= (native, znver4, sapphirerapids, x86-64-v3, ...); empty or none: portable")
set(MINISGD_ARCH_FLAGS "")
if(NOT MINISGD_ARCH STREQUAL "" AND NOT MINISGD_ARCH STREQUAL "none")
  # A Kokkos configured with a host Kokkos_ARCH_* already adds its own -march to every
  # consumer; two -march flags would silently fight (the later one wins).
  set(_host_arch "")
  foreach(_a IN LISTS Kokkos_ARCH)
    if(NOT _a MATCHES "^(KEPLER|MAXWELL|PASCAL|VOLTA|TURING|AMPERE|ADA|HOPPER|BLACKWELL|VEGA|NAVI|AMD_GFX|INTEL_GEN|INTEL_DG|INTEL_XE|INTEL_PVC)")
      list(APPEND _host_arch ${_a})
    endif()
  endforeach()
  if(_host_arch)
    message(FATAL_ERROR "MINISGD_ARCH=${MINISGD_ARCH}: this Kokkos was configured with "
                        "Kokkos_ARCH_${_host_arch}, which already sets the CPU architecture of "
                        "every Kokkos program; leave MINISGD_ARCH empty")
  endif()
  include(CheckCXXCompilerFlag)
  string(MAKE_C_IDENTIFIER "MINISGD_MARCH_${MINISGD_ARCH}_ACCEPTED" _accepted)
  check_cxx_compiler_flag("-march=${MINISGD_ARCH}" ${_accepted})
  if(NOT ${_accepted})
    message(FATAL_ERROR "MINISGD_ARCH=${MINISGD_ARCH}: the compiler (${CMAKE_CXX_COMPILER}) "
                        "rejects -march=${MINISGD_ARCH}")
  endif()
  # No FMA contraction (GCC contracts a*b+c even in ISO C++ mode once the CPU has FMA): the
  # kernels' sums must round the same in every code path (one thread or several, host or
  # the portable build), so FP64 results keep their bits.
  set(MINISGD_ARCH_FLAGS -march=${MINISGD_ARCH} -ffp-contract=off)
  string(REPLACE ";" " " _flags "${MINISGD_ARCH_FLAGS}")
  message(STATUS "minisgd CPU architecture: ${_flags}")
else()
  message(STATUS "minisgd CPU architecture: the compiler's default (MINISGD_ARCH empty)")
endif()
