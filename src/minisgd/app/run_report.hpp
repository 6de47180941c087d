#pragma once
// The last stage of a run: the JSON report (docs/output.md) from what the run measured, the
// summary on rank 0 and the output files the deck asks for.
#include <ostream>

#include <nlohmann/json_fwd.hpp>

#include "minisgd/app/train_run.hpp"
#include "minisgd/app/verdict.hpp"
#include "minisgd/comm/mpi_communicator.hpp"
#include "minisgd/config/config.hpp"

namespace minisgd {

/// The report of one run, on every rank (collective over `world`: maxima over ranks).
nlohmann::json build_report(const Config& c, const Trained& t, const Verdict& v,
                            comm::MpiCommunicator& world);

/// Writes output.report, output.history and output.weights (rank 0; a failure is every
/// rank's exit code).
void write_outputs_collectively(const Config& c, const nlohmann::json& report, const Trained& t,
                                comm::MpiCommunicator& world, std::ostream& err);

}  // namespace minisgd
