#pragma once
// The library entry point behind the minisgd executable: one run from a resolved config.
#include <mpi.h>

#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "minisgd/config/config.hpp"
#include "minisgd/solvers/trainer.hpp"

namespace minisgd {

struct RunOutcome {
  TrainResult result;
  std::vector<double> weights;  // the whole w, on every rank
  nlohmann::json report;        // what output.report holds
  bool valid = false;
  int exit_code = 0;  // kValid or kInvalid
};

/// Loads the data, trains, evaluates, writes the outputs the deck asks for (rank 0) and
/// prints progress and the summary to `out` on rank 0. Errors on any rank reach every rank
/// as Abort after one message on `err`.
RunOutcome run(const Config& c, MPI_Comm world, std::ostream& out, std::ostream& err);

}  // namespace minisgd
