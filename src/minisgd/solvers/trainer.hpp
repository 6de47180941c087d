#pragma once
// The training loop shared by every method: batch sequence, step sizes, stopping rules,
// periodic evaluation, progress lines and the loss history.
#include <functional>
#include <string>
#include <vector>

#include "minisgd/config/config.hpp"
#include "minisgd/core/state_archive.hpp"
#include "minisgd/data/partition.hpp"
#include "minisgd/report/history.hpp"
#include "minisgd/report/timers.hpp"
#include "minisgd/solvers/stepper.hpp"

namespace minisgd {

/// The batches of an epoch: `whole` batches of b rows, then, when b does not divide the m
/// training rows, one short batch of the `last` = m mod b rows after them (batch index
/// `whole`), so that an epoch trains on every row once. A step's update weighs each of its
/// rows by η/b, the short batch's too.
struct Epoch {
  Epoch(std::int64_t whole_batches, std::int64_t last_rows = 0)  // NOLINT: a count converts
      : whole(whole_batches), last(last_rows) {}
  std::int64_t whole = 0;
  std::int64_t last = 0;
  std::int64_t batches() const { return whole + (last > 0 ? 1 : 0); }
  /// Global rows of batch t, of b rows when whole.
  std::int64_t rows(std::int64_t t, std::int64_t b) const { return t < whole ? b : last; }
};

/// The epoch of the training rows `p` holds.
inline Epoch epoch_of(const Partition& p) { return {p.whole_batches(), p.last_batch_rows()}; }

struct TrainResult {
  std::int64_t iterations = 0;
  double epochs = 0;
  double initial_loss = 0;
  double final_loss = 0;
  double train_seconds = 0;            // every training step, evaluations excluded
  std::int64_t warmup_iterations = 0;  // steps before the FOM window
  std::int64_t fom_iterations = 0;     // steps inside it
  std::int64_t fom_samples = 0;        // rows those steps trained on
  double fom_seconds = 0;              // its length: fenced at its two ends only
  std::string stop_reason;
  std::vector<HistoryRow> history;
  std::int64_t resumed_at = 0;      // the step a restart continued from (0: none)
  std::int64_t checkpoint_at = -1;  // the step of the last checkpoint written (-1: none)
};

/// Checkpoint and restart (output.checkpoint, run.restart; docs/output.md, "Checkpoints").
struct Checkpointing {
  /// A checkpoint after the first group of steps that reaches each multiple of `every` steps
  /// (0: none); checkpoints never change how steps are grouped, so they never change results.
  std::int64_t every = 0;
  /// Collective: writes every rank's `state` as the checkpoint after step `iteration`.
  std::function<void(std::int64_t iteration, const std::string& state)> write;
  /// This rank's state to continue from (as written); empty: start at step 0.
  std::string resume;
};

/// What the loop asks of the run around it.
struct TrainHooks {
  /// Wall seconds since the run began, on this rank (solver.time_limit).
  std::function<double()> elapsed;
  /// A local time to its maximum over ranks (collective).
  std::function<double(double)> clock_max;
  /// Rank 0: one progress line per evaluation.
  std::function<void(const std::string&)> progress;
  Checkpointing checkpoints;
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

/// Runs the loop over epochs of the batches of `epoch`. Throws
/// RuntimeFailure when the objective becomes NaN or infinite. With solver.time_limit, the
/// ranks compare the largest elapsed time with it at every evaluation and checkpoint and stop
/// (stop_reason "time_limit") once it is spent, after a checkpoint when checkpoints are on.
TrainResult train(const Config& c, const Epoch& epoch, Stepper& stepper, const Evaluation& eval,
                  Timers& timers, const TrainHooks& hooks);

/// Steps a run plans over epochs of `batches_per_epoch` batches: solver.epochs of them, at most
/// solver.max_iters (alone when epochs is 0).
std::int64_t planned_steps(const SolverConfig& s, std::int64_t batches_per_epoch);

/// The sizes of the groups of steps train() hands a stepper whose groups hold up to `group`
/// steps: a group never crosses an evaluation point or the end, so besides `group` only the
/// last group of a stretch between two evaluation points can be shorter.
std::vector<int> group_sizes(const Config& c, const Epoch& epoch, int group);

/// Saves or restores the loop's own state: the step, the results so far and the history.
void progress_state(StateArchive& a, TrainResult& r, std::int64_t& iteration,
                    std::int64_t& first_measured);

}  // namespace minisgd
