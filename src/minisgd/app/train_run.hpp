#pragma once
// The first two stages of a run (docs/design.md, "From deck to report"): set up (training
// communicator, data, stepper) and train. What they measure is kept for the verdict and the
// report; the data and the stepper are gone when set_up_and_train returns.
#include <cstdint>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/comm/mpi_communicator.hpp"
#include "minisgd/config/config.hpp"
#include "minisgd/solvers/trainer.hpp"

namespace minisgd {

/// run.min_seconds: how many times the deck's training ran to fill the minimum FOM window.
struct RunRule {
  double min_seconds = 0;  // run.min_seconds (0: no minimum)
  int repetitions = 1;     // trainings of the deck, the first included
  double loss_spread = 0;  // max |F_k - F_1| / |F_1| of the final losses over repetitions
};

struct Trained {
  TrainResult result;  // the first training; fom_* add up every repetition's window (this rank)
  RunRule rule;
  std::int64_t steps = 0;       // training steps this process took, every repetition
  std::vector<double> weights;  // the whole w, on every rank
  double setup_seconds = 0;     // this rank's eta0 probe and stepper set-up (counted in the
                                // time to target)
  std::int64_t columns = 0;     // length of w: features, plus one with an intercept
  comm::Stats traffic;          // the training communicator's counters (this rank)
  nlohmann::json problem;       // the report's sections, gathered while the run existed
  nlohmann::json data_load;
  nlohmann::json kernels;
  nlohmann::json compression;
  nlohmann::json timers;
  bool timers_fenced = false;
  nlohmann::json s_auto;          // solver.s: auto's choice and predictions (null otherwise)
  nlohmann::json step_size_auto;  // eta0: auto's choice and candidates (null otherwise)
};

/// Builds the training communicator (comm.backend), loads the data in the storage type the
/// realized precision plan chose, builds the stepper, prints the problem on rank 0 and trains.
/// Errors on any rank reach every rank as Abort (app/collective.hpp).
Trained set_up_and_train(const Config& c, comm::MpiCommunicator& world, std::ostream& out,
                         std::ostream& err);

}  // namespace minisgd
