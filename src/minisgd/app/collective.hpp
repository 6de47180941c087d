#pragma once
#include <ostream>
#include <string>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/core/errors.hpp"

namespace minisgd {

/// Runs f on every rank of comm. If it throws anywhere, the lowest failing rank prints its
/// one-line message to `err` and every rank throws Abort with the largest exit code, so an
/// error on one rank never leaves the others waiting in a collective.
template <class F>
void collectively(comm::Communicator& comm, std::ostream& err, F&& f) {
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
  const int worst = comm.allreduce_value(code, comm::Op::max);
  if (worst == 0) return;
  const int first = comm.allreduce_value(code != 0 ? comm.rank() : comm.size(), comm::Op::min);
  if (comm.rank() == first) err << "minisgd: error: " << msg << std::endl;
  throw Abort{worst};
}

}  // namespace minisgd
