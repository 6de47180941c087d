#pragma once
// The library entry point behind the minisgd executable: one run from a resolved config,
// in four stages (docs/design.md, "From deck to report"): set up and train
// (app/train_run.hpp), verdict (app/verdict.hpp), report (app/run_report.hpp).
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "minisgd/comm/mpi_communicator.hpp"
#include "minisgd/config/config.hpp"
#include "minisgd/solvers/trainer.hpp"

namespace minisgd {

struct RunOutcome {
  TrainResult result;
  std::vector<double> weights;  // the whole w, on every rank
  nlohmann::json report;        // what output.report holds
  bool valid = false;
  int exit_code = 0;  // kValid, kInvalid, or kTimeLimit
};

/// Loads the data, trains, evaluates, writes the outputs the deck asks for (rank 0) and
/// prints progress and the summary to `out` on rank 0; the precision study instead when
/// run.study asks for it (app/study.hpp). Errors on any rank reach every rank as Abort after
/// one message on `err`. `world` carries set-up, evaluation and report traffic; the training
/// traffic gets a communicator of its own (comm/factory.hpp).
RunOutcome run(const Config& c, comm::MpiCommunicator& world, std::ostream& out, std::ostream& err);

}  // namespace minisgd
