#pragma once
// What ends an executable (minisgd, minisgd-convert) when nothing else did: an exception that
// escaped every handler, or SIGTERM/SIGINT.
#include <mpi.h>

#include <cstdlib>
#include <exception>
#include <iostream>

#include "minisgd/core/atomic_file.hpp"
#include "minisgd/core/errors.hpp"

namespace minisgd {

/// Whatever escapes (a bad_alloc, an exception from a library) ends the job with exit code 3 and
/// its message, never std::terminate's core dump with other ranks waiting.
[[noreturn]] inline void fail_unexpectedly(const char* what) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::cerr << "minisgd: error: rank " << rank
            << ": unexpected failure: " << printable_message(what) << std::endl;
  if (ranks > 1) MPI_Abort(MPI_COMM_WORLD, kRuntimeFailure);
  MPI_Finalize();
  std::_Exit(kRuntimeFailure);
}

inline void on_terminate() {
  const std::exception_ptr e = std::current_exception();
  try {
    if (e) std::rethrow_exception(e);
    fail_unexpectedly("std::terminate");
  } catch (const std::exception& x) {
    fail_unexpectedly(x.what());
  } catch (...) {
    fail_unexpectedly("an exception of unknown type");
  }
}

/// Installs both last resorts; right after MPI_Init: std::terminate ends the job as
/// fail_unexpectedly does, and SIGTERM or SIGINT removes the temporary files of every write
/// under way and exits 143 or 130 (remove_temporaries_on_signal).
inline void install_last_resorts() {
  std::set_terminate(on_terminate);
  remove_temporaries_on_signal();
}

}  // namespace minisgd
