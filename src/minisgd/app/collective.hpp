#pragma once
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <ostream>
#include <stdexcept>
#include <string>
#include <thread>

#include "minisgd/comm/mpi_communicator.hpp"
#include "minisgd/core/errors.hpp"

namespace minisgd {

/// How long a failed rank waits for the others to reach the agreement before it ends the
/// whole job: they may be waiting for it in a collective of the run and would never come.
constexpr double kAgreementPatienceSeconds = 3.0;

/// Test hook, documented in README.md: with MINISGD_INJECT_FAILURE=<rank>:<phase> in the
/// environment, that rank throws at the start of `phase` ("train"), so a test can check that a
/// failure on one rank ends the whole job within seconds.
inline void injected_failure(const char* phase, int rank) {
  const char* spec = std::getenv("MINISGD_INJECT_FAILURE");
  if (spec && std::string(spec) == std::to_string(rank) + ":" + phase)
    throw RuntimeFailure(std::string("injected failure on rank ") + std::to_string(rank) + " at " +
                         phase + " (MINISGD_INJECT_FAILURE)");
}

/// Test hook, as injected_failure: with MINISGD_INJECT_FAILURE=<rank>:escape in the environment,
/// that rank throws at the start of `phase` from a noexcept function, so no handler of the run
/// sees it: std::terminate, which the last resort (app/last_resort.hpp) turns into exit 3 with
/// the exception's message.
[[noreturn]] inline void throw_injected_escape(const char* phase, int rank) {
  throw std::logic_error(std::string("injected escape on rank ") + std::to_string(rank) + " at " +
                         phase + " (MINISGD_INJECT_FAILURE)");
}
inline void injected_escape(const char* phase, int rank) noexcept {
  const char* spec = std::getenv("MINISGD_INJECT_FAILURE");
  if (spec && std::string(spec) == std::to_string(rank) + ":escape")
    throw_injected_escape(phase, rank);
}

/// Runs f on every rank of world. If it throws anywhere, the lowest failing rank prints its
/// one-line message to `err` and every rank throws Abort with the largest exit code. The
/// agreement runs on a communicator of its own, so it never matches a collective of the run:
/// a rank that failed while the others went on into a collective (which waits for it forever)
/// prints its message and calls MPI_Abort after kAgreementPatienceSeconds instead of hanging.
template <class F>
void collectively(comm::MpiCommunicator& world, std::ostream& err, F&& f) {
  MPI_Comm agree;
  MPI_Comm_dup(world.native(), &agree);
  int code = 0;
  std::string msg;
  try {
    f();
  } catch (const InputError& e) {
    code = kBadInput;
    msg = e.what();
  } catch (const RuntimeFailure& e) {
    code = kRuntimeFailure;
    msg = e.what();
  } catch (const std::exception& e) {
    code = kRuntimeFailure;
    msg = std::string("internal error: ") + e.what();
  }
  const int rank = world.rank(), size = world.size();
  int mine[2] = {code, code != 0 ? size - rank : 0}, all[2] = {0, 0};  // max: worst, lowest rank
  MPI_Request request;
  MPI_Iallreduce(mine, all, 2, MPI_INT, MPI_MAX, agree, &request);
  if (code == 0) {
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(kAgreementPatienceSeconds);
    int done = 0;
    while (!done) {
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (!done && std::chrono::steady_clock::now() > deadline) {
        err << "minisgd: error: " << printable_message(msg) << " (rank " << rank
            << "; the other ranks are busy elsewhere: ending the job)" << std::endl;
        MPI_Abort(world.native(), code);
      }
    }
  }
  MPI_Comm_free(&agree);
  if (all[0] == 0) return;
  if (rank == size - all[1]) err << "minisgd: error: " << printable_message(msg) << std::endl;
  throw Abort{all[0]};
}

}  // namespace minisgd
