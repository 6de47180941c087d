# Header self-containment: every public header under src/minisgd compiles on its own (and twice,
# so a missing include guard shows too). One generated translation unit per header, in an
# object library outside the default target (about a hundred Kokkos translation units: only
# the test builds them); the ctest entry builds it, so an edited header is checked again.
file(GLOB_RECURSE _minisgd_headers CONFIGURE_DEPENDS RELATIVE ${PROJECT_SOURCE_DIR}/src
     ${PROJECT_SOURCE_DIR}/src/minisgd/*.hpp)
if(NOT MINISGD_ENABLE_NCCL)
  list(REMOVE_ITEM _minisgd_headers minisgd/comm/nccl_communicator.hpp)  # needs nccl.h
endif()
if(NOT MINISGD_ENABLE_CUBLAS)  # need the CUDA runtime headers
  list(REMOVE_ITEM _minisgd_headers minisgd/kernels/gram/cublas_gram.hpp
                   minisgd/kernels/gram/cublas_kokkos.hpp)
endif()
# A vector tier's own headers compile only inside its region of a translation unit
# (core/simd/target_begin.hpp .. target_end.hpp, which are not headers): each is checked there,
# as the tiers' translation units (kernels/host/tier_*.cpp, compress/host/tier_*.cpp) include it.
list(REMOVE_ITEM _minisgd_headers minisgd/core/simd/target_begin.hpp
                 minisgd/core/simd/target_end.hpp minisgd/core/simd/avx2.hpp
                 minisgd/core/simd/avx512.hpp minisgd/core/simd/dither_avx512.hpp
                 minisgd/kernels/host/row_loops.hpp minisgd/kernels/host/gram_tiles.hpp)
set(_tier_headers minisgd/kernels/host/row_loops.hpp:1 minisgd/kernels/host/gram_tiles.hpp:1)
if("avx2" IN_LIST MINISGD_SIMD_TIERS)
  list(APPEND _tier_headers minisgd/core/simd/avx2.hpp:2)
endif()
if("avx512" IN_LIST MINISGD_SIMD_TIERS)
  list(APPEND _tier_headers minisgd/core/simd/avx512.hpp:3 minisgd/core/simd/dither_avx512.hpp:3)
endif()
set(_tus)
foreach(h IN LISTS _minisgd_headers _tier_headers)
  set(_before "")
  set(_after "")
  if(h MATCHES "^(.*):([0-9])$")
    set(h ${CMAKE_MATCH_1})
    set(_before "#include \"minisgd/kernels/host/tier_prelude.hpp\"\n#define MINISGD_SIMD_TARGET ${CMAKE_MATCH_2}\n#include \"minisgd/core/simd/target_begin.hpp\"\n")
    set(_after "#include \"minisgd/core/simd/target_end.hpp\"\n")
  endif()
  string(MAKE_C_IDENTIFIER ${h} _id)
  set(_tu ${CMAKE_CURRENT_BINARY_DIR}/headers/${_id}.cpp)
  set(_content "${_before}#include \"${h}\"\n#include \"${h}\"\n${_after}")
  set(_old "")
  if(EXISTS ${_tu})
    file(READ ${_tu} _old)
  endif()
  if(NOT _old STREQUAL _content)  # rewrite only on change: no rebuild at every configure
    file(WRITE ${_tu} "${_content}")
  endif()
  list(APPEND _tus ${_tu})
endforeach()
add_library(header_self_containment OBJECT EXCLUDE_FROM_ALL ${_tus})
target_link_libraries(header_self_containment PRIVATE minisgd)
add_test(NAME header_self_containment
         COMMAND ${CMAKE_COMMAND} --build ${CMAKE_BINARY_DIR} --target header_self_containment)
set_tests_properties(header_self_containment PROPERTIES TIMEOUT 3600)
