#include "minisgd/solvers/trainer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "minisgd/core/errors.hpp"
#include "minisgd/core/profiling.hpp"
#include "minisgd/data/partition.hpp"
#include "minisgd/solvers/schedule.hpp"

namespace minisgd {
namespace {

/// The first step whose iterate enters the average of a run of `total` steps (none: never).
std::int64_t averaging_start(const SolverConfig& s, std::int64_t nb, std::int64_t total) {
  if (s.averaging == Averaging::none) return std::numeric_limits<std::int64_t>::max();
  if (s.averaging_start)
    return static_cast<std::int64_t>(std::ceil(*s.averaging_start * double(nb)));
  return s.averaging == Averaging::tail ? total / 2 : 0;
}

/// The steps of a run: batch order of every epoch, step size η, shrink factor ρ = 1 − ηλ and
/// averaging weight of every step (docs/design.md).
class StepPlanner {
 public:
  StepPlanner(const Config& c, std::int64_t batches_per_epoch, std::int64_t average_from)
      : c_(c), nb_(batches_per_epoch), average_from_(average_from) {}

  /// Steps [first, end).
  const std::vector<StepSpec>& group(std::int64_t first, std::int64_t end) {
    group_.clear();
    for (std::int64_t t = first; t < end; ++t) {
      const std::int64_t e = t / nb_;
      if (e != order_epoch_) {
        order_ = batch_order(nb_, c_.run.seed, e, c_.solver.reshuffle);
        order_epoch_ = e;
      }
      const double eta = step_size(c_.solver.step_size, t, e);
      // Polynomial-decay averaging: the k-th averaged iterate weighs (γ + 1)/(k + γ), 1/k at
      // γ = 0 (the plain mean); γ > 0 forgets the early iterates faster.
      const double gamma = c_.solver.averaging_gamma;
      const double a =
          t >= average_from_ ? (gamma + 1.0) / (double(t - average_from_ + 1) + gamma) : 0.0;
      group_.push_back({order_[t % nb_], eta, 1.0 - eta * c_.model.l2, a, e});
    }
    return group_;
  }

 private:
  const Config& c_;
  std::int64_t nb_;
  std::int64_t average_from_;
  std::vector<std::int64_t> order_;
  std::int64_t order_epoch_ = -1;
  std::vector<StepSpec> group_;
};

}  // namespace

std::string progress_line(const HistoryRow& h, std::int64_t total, double wall_s,
                          double time_left_s) {
  char line[200];
  const int n =
      std::snprintf(line, sizeof line, "epoch %8.3f  iter %10lld  loss %.8e  time %8.3f s", h.epoch,
                    static_cast<long long>(h.iteration), h.loss, h.seconds);
  if (h.iteration > 0 && wall_s > 0) {
    const double rate = double(h.iteration) / wall_s;
    double eta = double(total - h.iteration) / rate;
    if (time_left_s >= 0) eta = std::min(eta, time_left_s);
    const long long left = std::llround(eta);
    std::snprintf(line + n, sizeof line - n, "  rate %.3e steps/s  eta %lld:%02lld:%02lld", rate,
                  left / 3600, left / 60 % 60, left % 60);
  }
  return line;
}

void progress_state(StateArchive& a, TrainResult& r, std::int64_t& iteration,
                    std::int64_t& first_measured) {
  a.value("train.iteration", iteration);
  a.value("train.first_measured", first_measured);
  a.value("train.initial_loss", r.initial_loss);
  a.value("train.seconds", r.train_seconds);
  a.value("train.fom_iterations", r.fom_iterations);
  a.value("train.fom_seconds", r.fom_seconds);
  state_vector(a, "train.history", r.history);
}

TrainResult train(const Config& c, std::int64_t nb, Stepper& stepper, const Evaluation& eval,
                  Timers& timers, const TrainHooks& hooks) {
  const SolverConfig& s = c.solver;
  std::int64_t total = static_cast<std::int64_t>(std::ceil(s.epochs * double(nb)));
  if (s.max_iters > 0) total = s.epochs > 0 ? std::min(total, s.max_iters) : s.max_iters;
  const std::int64_t every = s.eval_every > 0 ? s.eval_every : nb;
  const double nan = std::numeric_limits<double>::quiet_NaN();

  TrainResult r;
  Kokkos::Timer wall;  // for the progress line's rate
  auto evaluate = [&](std::int64_t it) {
    auto t = timers.scope("eval");
    const Vector<double> w = stepper.local_weights();
    HistoryRow h{it, double(it) / double(nb), eval.objective(w),
                 eval.test_loss ? eval.test_loss(w) : nan, r.train_seconds};
    if (!std::isfinite(h.loss))
      throw RuntimeFailure("objective is " + std::to_string(h.loss) + " at iteration " +
                           std::to_string(it) + " (diverged after iteration " +
                           std::to_string(r.history.empty() ? 0 : r.history.back().iteration) +
                           "; try a smaller solver.step_size)");
    r.history.push_back(h);
    const double time_left = s.time_limit > 0 ? std::max(0.0, s.time_limit - hooks.elapsed()) : -1;
    hooks.progress(progress_line(h, total, wall.seconds(), time_left));
    return h.loss;
  };

  std::int64_t it = 0, first_measured = -1;
  const Checkpointing& saves = hooks.checkpoints;
  if (!saves.resume.empty()) {  // run.restart: continue where the checkpoint was written
    StateArchive a(saves.resume);
    progress_state(a, r, it, first_measured);
    stepper.state(a);
    a.finish();
    r.resumed_at = it;
  } else {
    r.initial_loss = evaluate(0);
  }
  auto save = [&] {
    StateArchive a;
    progress_state(a, r, it, first_measured);
    stepper.state(a);
    saves.write(it, a.bytes());
    r.checkpoint_at = it;
  };
  const auto never = std::numeric_limits<std::int64_t>::max();
  auto next_save = [&] { return saves.every > 0 ? (it / saves.every + 1) * saves.every : never; };
  std::int64_t save_at = next_save();

  wall.reset();
  r.stop_reason = "iterations";
  // Warm-up: the first output.warmup_steps steps (whole groups, at most half the run) run
  // outside the FOM window (docs/output.md, "Figure of merit").
  const std::int64_t warmup = std::min(c.output.warmup_steps, total / 2);
  StepPlanner planner(c, nb, averaging_start(s, nb, total));
  // Whole groups while it < limit; a group never crosses `stop`.
  auto steps_until = [&](std::int64_t limit, std::int64_t stop) {
    while (it < limit) {
      const std::int64_t end = std::min(it + stepper.group_size(), stop);
      stepper.advance(planner.group(it, end));
      it = end;
    }
  };
  Kokkos::Timer clock;
  while (it < total) {
    // A stretch of steps between two evaluations, fenced at its two ends only; the FOM window
    // is its part after the warm-up. A group never crosses an evaluation point or the end, so
    // the groups depend on `it` alone; a checkpoint pauses the stretch after the group that
    // reaches it.
    const std::int64_t stop = std::min((it / every + 1) * every, total);
    const std::int64_t pause = std::min(stop, save_at);
    std::int64_t measured_from = -1;
    double measured_start = 0;
    fence("training stretch begins");
    clock.reset();
    if (it < warmup) {
      Region region("minisgd::warmup");
      steps_until(std::min(warmup, pause), stop);
      if (it < pause) fence("warm-up ends");
    }
    if (it < pause) {
      measured_from = it;
      if (first_measured < 0) first_measured = it;
      measured_start = clock.seconds();
      Region region("minisgd::fom_window");
      steps_until(pause, stop);
    }
    fence("training stretch ends");
    const double seconds = clock.seconds();
    r.train_seconds += seconds;
    if (measured_from >= 0) {
      r.fom_seconds += seconds - measured_start;
      r.fom_iterations += it - measured_from;
    }
    const bool evaluated = it % every == 0 || it == total;
    if (evaluated) {
      const double loss = evaluate(it);
      if (s.target_loss && loss <= *s.target_loss) {
        r.stop_reason = "target_loss";
        break;
      }
    }
    const bool save_point = it >= save_at && it < total;
    if (s.time_limit > 0 && (evaluated || save_point) &&
        hooks.clock_max(hooks.elapsed()) >= s.time_limit) {
      r.stop_reason = "time_limit";
      if (saves.every > 0 && it < total) save();
      break;
    }
    if (save_point) {
      save();
      save_at = next_save();
    }
  }
  r.warmup_iterations = first_measured < 0 ? it : first_measured;
  r.iterations = it;
  r.epochs = double(it) / double(nb);
  r.final_loss = r.history.back().loss;
  return r;
}

}  // namespace minisgd
