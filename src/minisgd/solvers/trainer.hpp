#pragma once
// The training loop shared by every method: batch sequence, step sizes, stopping rules,
// periodic evaluation, progress lines and the loss history.
#include <functional>
#include <string>
#include <vector>

#include "minisgd/config/config.hpp"
#include "minisgd/report/history.hpp"
#include "minisgd/report/timers.hpp"
#include "minisgd/solvers/stepper.hpp"

namespace minisgd {

struct TrainResult {
  std::int64_t iterations = 0;
  double epochs = 0;
  double initial_loss = 0;
  double final_loss = 0;
  double train_seconds = 0;            // every training step, evaluations excluded
  std::int64_t warmup_iterations = 0;  // steps before the FOM window
  std::int64_t fom_iterations = 0;     // steps inside it
  double fom_seconds = 0;              // its length: fenced at its two ends only
  std::string stop_reason;
  std::vector<HistoryRow> history;
};

struct Evaluation {
  std::function<double(const Vector<double>&)> objective;  // collective
  std::function<double(const Vector<double>&)> test_loss;  // empty without a test set
};

/// The progress line of the evaluation after step h.iteration of `total_steps`: where the run
/// is and, after the first, its rate (steps per second of `wall_s`, the wall time since training
/// began, evaluations included) and the time left to the last step, at most `time_left_s` (the
/// rest of solver.time_limit; negative: no limit). A target loss may end the run sooner.
std::string progress_line(const HistoryRow& h, std::int64_t total_steps, double wall_s,
                          double time_left_s);

/// Runs the loop. `batches_per_epoch` global batches of b rows make an epoch. Throws
/// RuntimeFailure when the objective becomes NaN or infinite. `progress` (rank 0) gets one
/// line per evaluation; `clock_max` turns a local time into the maximum over ranks.
TrainResult train(const Config& c, std::int64_t batches_per_epoch, Stepper& stepper,
                  const Evaluation& eval, Timers& timers,
                  const std::function<double(double)>& clock_max,
                  const std::function<void(const std::string&)>& progress);

}  // namespace minisgd
