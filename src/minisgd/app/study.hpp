#pragma once
// run.study: precision — the relative loss gap each precision knob causes on its own.
#include <ostream>

#include "minisgd/app/run.hpp"
#include "minisgd/comm/mpi_communicator.hpp"

namespace minisgd {

/// A sibling of the single run, built from the same stages (app/train_run.hpp, verdict.hpp,
/// run_report.hpp): the fp32 baseline (validated, reported and written like any run), then
/// one training per knob with that knob alone lowered to run.study_format. Prints the table on rank
/// 0 and adds it to the report as "study": rows of knob, format, final loss and relative gap (F −
/// F_fp32)/F_fp32. A lowered knob that makes the run diverge is a row, not an error.
RunOutcome run_precision_study(const Config& c, comm::MpiCommunicator& world, std::ostream& out,
                               std::ostream& err);

}  // namespace minisgd
