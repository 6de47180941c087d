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
set(_tus)
foreach(h IN LISTS _minisgd_headers)
  string(MAKE_C_IDENTIFIER ${h} _id)
  set(_tu ${CMAKE_CURRENT_BINARY_DIR}/headers/${_id}.cpp)
  set(_content "#include \"${h}\"\n#include \"${h}\"\n")
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
