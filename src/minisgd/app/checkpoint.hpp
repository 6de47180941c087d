#pragma once
// Writing and reading checkpoints across ranks (docs/output.md, "Checkpoints"): rank 0 gathers
// every rank's state and writes one file through a rename; at a restart rank 0 reads and checks
// it and hands every rank its own state.
#include <cstdint>
#include <string>

#include "minisgd/comm/mpi_communicator.hpp"
#include "minisgd/config/config.hpp"

namespace minisgd {

/// Collective: writes output.checkpoint.path with every rank's `state` after step `iteration`.
/// When rank 0 cannot write it, every rank throws RuntimeFailure (rank 0 with the reason).
void write_checkpoint(const Config& c, comm::MpiCommunicator& world, std::int64_t iteration,
                      const std::string& state);

/// Collective: this rank's state from run.restart. When the file is missing, truncated,
/// corrupt or was written for another deck, rank count or version, every rank throws
/// InputError (rank 0 with the reason).
std::string read_checkpoint(const Config& c, comm::MpiCommunicator& world);

}  // namespace minisgd
