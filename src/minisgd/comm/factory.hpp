#pragma once
// The communicator a deck asks for (comm.backend, comm.gpu_aware, comm.emulate), beside the
// stepper and compressor factories.
#include <mpi.h>

#include <memory>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/config/config.hpp"

namespace minisgd::comm {

/// A communicator of its own over the ranks of `parent` (MPI, or NCCL in builds with it),
/// behind the modelled network when comm.emulate is given. Whether this build and machine can
/// serve the backend is the driver's question (app/capability_check.hpp); a backend this build
/// lacks is a std::logic_error here.
std::unique_ptr<Communicator> make_communicator(const CommConfig& c, MPI_Comm parent);

}  // namespace minisgd::comm
