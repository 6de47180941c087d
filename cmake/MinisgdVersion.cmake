# Writes version.hpp with the project version and the git hash at configure time
# (and again at build time, so a rebuild after a commit reports the new hash).
set(_in  "${CMAKE_CURRENT_LIST_DIR}/version.hpp.in")
set(_out "${MINISGD_VERSION_OUT}")
execute_process(COMMAND git -C "${MINISGD_SOURCE_DIR}" rev-parse --short=12 HEAD
                OUTPUT_VARIABLE MINISGD_GIT_HASH OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0 OR MINISGD_GIT_HASH STREQUAL "")
  set(MINISGD_GIT_HASH "unknown")
endif()
execute_process(COMMAND git -C "${MINISGD_SOURCE_DIR}" diff --quiet HEAD
                RESULT_VARIABLE _dirty ERROR_QUIET)
if(_dirty EQUAL 1)
  string(APPEND MINISGD_GIT_HASH "-dirty")
endif()
configure_file("${_in}" "${_out}.tmp" @ONLY)
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${_out}.tmp" "${_out}")
