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

std::int64_t planned_steps(const SolverConfig& s, std::int64_t nb) {
  std::int64_t total = static_cast<std::int64_t>(std::ceil(s.epochs * double(nb)));
  if (s.max_iters > 0) total = s.epochs > 0 ? std::min(total, s.max_iters) : s.max_iters;
  return total;
}

namespace {

/// Steps of the whole run.
std::int64_t total_steps(const SolverConfig& s, std::int64_t nb) { return planned_steps(s, nb); }

/// Steps between two evaluation points.
std::int64_t evaluation_interval(const SolverConfig& s, std::int64_t nb) {
  return s.eval_every > 0 ? s.eval_every : nb;
}

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
  StepPlanner(const Config& c, const Epoch& epoch, std::int64_t total, std::int64_t average_from)
      : c_(c), epoch_(epoch), nb_(epoch.batches()), total_(total), average_from_(average_from) {}

  /// Steps [first, end).
  const std::vector<StepSpec>& group(std::int64_t first, std::int64_t end) {
    group_.clear();
    for (std::int64_t t = first; t < end; ++t) {
      const std::int64_t e = t / nb_;
      if (e != order_epoch_) {
        order_ = batch_order(nb_, c_.run.seed, e, c_.solver.reshuffle);
        order_epoch_ = e;
      }
      const double eta = step_size(c_.solver.step_size, t, e, total_);
      // Polynomial-decay averaging: the k-th averaged iterate weighs (γ + 1)/(k + γ), 1/k at
      // γ = 0 (the plain mean); γ > 0 forgets the early iterates faster.
      const double gamma = c_.solver.averaging_gamma;
      const double a =
          t >= average_from_ ? (gamma + 1.0) / (double(t - average_from_ + 1) + gamma) : 0.0;
      group_.push_back({order_[t % nb_], eta, 1.0 - eta * c_.model.l2, a, e});
    }
    return group_;
  }

  /// Rows the steps [first, end) train on: b each, less b − last for each short batch among
  /// them (one per epoch, where the epoch's batch order puts it).
  std::int64_t samples(std::int64_t first, std::int64_t end) const {
    const std::int64_t b = c_.solver.batch_size;
    std::int64_t n = (end - first) * b;
    if (epoch_.last == 0 || end <= first) return n;
    for (std::int64_t e = first / nb_; e <= (end - 1) / nb_; ++e) {
      const std::int64_t begin = e * nb_;
      std::int64_t at = begin;  // the step of epoch e that takes the short batch
      if (first > begin || end < begin + nb_) {
        const auto order = batch_order(nb_, c_.run.seed, e, c_.solver.reshuffle);
        at += std::find(order.begin(), order.end(), epoch_.whole) - order.begin();
      }
      if (at >= first && at < end) n -= b - epoch_.last;
    }
    return n;
  }

 private:
  const Config& c_;
  Epoch epoch_;
  std::int64_t nb_;
  std::int64_t total_;  // planned steps of the run (the linear schedule ends there)
  std::int64_t average_from_;
  std::vector<std::int64_t> order_;
  std::int64_t order_epoch_ = -1;
  std::vector<StepSpec> group_;
};

}  // namespace

std::vector<int> group_sizes(const Config& c, const Epoch& epoch, int group) {
  const std::int64_t total = total_steps(c.solver, epoch.batches());
  const std::int64_t every = evaluation_interval(c.solver, epoch.batches());
  std::vector<int> sizes;
  // Every stretch but the last is `every` steps long; each is cut into groups from its start.
  for (const std::int64_t stretch : {std::min(every, total), total - (total - 1) / every * every})
    for (const std::int64_t size : {std::min<std::int64_t>(group, stretch), stretch % group})
      if (size > 0 && std::find(sizes.begin(), sizes.end(), size) == sizes.end())
        sizes.push_back(int(size));
  return sizes;
}

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
  a.value("train.fom_samples", r.fom_samples);
  a.value("train.fom_seconds", r.fom_seconds);
  state_vector(a, "train.history", r.history);
}

namespace {

/// One run of train(): the loop's position and result, and its parts. The run is a sequence
/// of stretches of steps between two evaluation points, each fenced and timed at its two ends
/// only, then evaluated, checked against the stopping rules and checkpointed.
class TrainingLoop {
 public:
  TrainingLoop(const Config& c, const Epoch& epoch, Stepper& stepper, const Evaluation& eval,
               Timers& timers, const TrainHooks& hooks)
      : s_(c.solver),
        nb_(epoch.batches()),
        stepper_(stepper),
        eval_(eval),
        timers_(timers),
        hooks_(hooks),
        saves_(hooks.checkpoints),
        total_(total_steps(c.solver, nb_)),
        every_(evaluation_interval(s_, nb_)),
        // Warm-up: the first output.warmup_steps steps (whole groups, at most half the run) run
        // outside the FOM window (docs/output.md, "Figure of merit").
        warmup_(std::min(c.output.warmup_steps, total_ / 2)),
        planner_(c, epoch, total_, averaging_start(s_, nb_, total_)) {}

  TrainResult run() {
    resume_or_start();
    save_at_ = next_save();
    wall_.reset();
    r_.stop_reason = "iterations";
    while (it_ < total_) {
      // A group never crosses an evaluation point or the end, so the groups depend on the
      // position alone; a checkpoint pauses the stretch after the group that reaches it.
      const std::int64_t stop = std::min((it_ / every_ + 1) * every_, total_);
      stretch(stop, std::min(stop, save_at_));
      if (!go_on()) break;
    }
    r_.warmup_iterations = first_measured_ < 0 ? it_ : first_measured_;
    r_.iterations = it_;
    r_.epochs = double(it_) / double(nb_);
    r_.final_loss = r_.history.back().loss;
    return r_;
  }

 private:
  /// The objective (and test loss) at the current step, recorded and printed.
  double evaluate() {
    auto t = timers_.scope("eval");
    const Vector<double> w = stepper_.local_weights();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    HistoryRow h{it_, double(it_) / double(nb_), eval_.objective(w),
                 eval_.test_loss ? eval_.test_loss(w) : nan, r_.train_seconds};
    if (!std::isfinite(h.loss))
      throw RuntimeFailure("objective is " + std::to_string(h.loss) + " at iteration " +
                           std::to_string(it_) + " (diverged after iteration " +
                           std::to_string(r_.history.empty() ? 0 : r_.history.back().iteration) +
                           "; try a smaller solver.step_size)");
    r_.history.push_back(h);
    const double time_left =
        s_.time_limit > 0 ? std::max(0.0, s_.time_limit - hooks_.elapsed()) : -1;
    hooks_.progress(progress_line(h, total_, wall_.seconds(), time_left));
    return h.loss;
  }

  /// run.restart: continue where the checkpoint was written; otherwise the initial objective.
  void resume_or_start() {
    if (saves_.resume.empty()) {
      r_.initial_loss = evaluate();
      return;
    }
    StateArchive a(saves_.resume);
    progress_state(a, r_, it_, first_measured_);
    stepper_.state(a);
    a.finish();
    r_.resumed_at = it_;
  }

  void save() {
    StateArchive a;
    progress_state(a, r_, it_, first_measured_);
    stepper_.state(a);
    saves_.write(it_, a.bytes());
    r_.checkpoint_at = it_;
  }

  std::int64_t next_save() const {
    return saves_.every > 0 ? (it_ / saves_.every + 1) * saves_.every
                            : std::numeric_limits<std::int64_t>::max();
  }

  /// Whole groups while the position is below `limit`; a group never crosses `stop`.
  void steps_until(std::int64_t limit, std::int64_t stop) {
    while (it_ < limit) {
      const std::int64_t end = std::min(it_ + stepper_.group_size(), stop);
      stepper_.advance(planner_.group(it_, end));
      it_ = end;
    }
  }

  /// Steps up to `pause` (≤ `stop`), fenced at both ends; the FOM window is the part after the
  /// warm-up.
  void stretch(std::int64_t stop, std::int64_t pause) {
    std::int64_t measured_from = -1;
    double measured_start = 0;
    fence("training stretch begins");
    clock_.reset();
    if (it_ < warmup_) {
      Region region("minisgd::warmup");
      steps_until(std::min(warmup_, pause), stop);
      if (it_ < pause) fence("warm-up ends");
    }
    if (it_ < pause) {
      measured_from = it_;
      if (first_measured_ < 0) first_measured_ = it_;
      measured_start = clock_.seconds();
      Region region("minisgd::fom_window");
      steps_until(pause, stop);
    }
    fence("training stretch ends");
    const double seconds = clock_.seconds();
    r_.train_seconds += seconds;
    if (measured_from >= 0) {
      r_.fom_seconds += seconds - measured_start;
      r_.fom_iterations += it_ - measured_from;
      r_.fom_samples += planner_.samples(measured_from, it_);
    }
  }

  /// After a stretch: evaluation, target loss, time limit and checkpoint; false to stop.
  bool go_on() {
    const bool evaluated = it_ % every_ == 0 || it_ == total_;
    if (evaluated) {
      const double loss = evaluate();
      if (s_.target_loss && loss <= *s_.target_loss) {
        r_.stop_reason = "target_loss";
        return false;
      }
    }
    const bool save_point = it_ >= save_at_ && it_ < total_;
    if (s_.time_limit > 0 && (evaluated || save_point) &&
        hooks_.clock_max(hooks_.elapsed()) >= s_.time_limit) {
      r_.stop_reason = "time_limit";
      if (saves_.every > 0 && it_ < total_) save();
      return false;
    }
    if (save_point) {
      save();
      save_at_ = next_save();
    }
    return true;
  }

  const SolverConfig& s_;
  const std::int64_t nb_;
  Stepper& stepper_;
  const Evaluation& eval_;
  Timers& timers_;
  const TrainHooks& hooks_;
  const Checkpointing& saves_;
  const std::int64_t total_, every_, warmup_;
  StepPlanner planner_;
  TrainResult r_;
  Kokkos::Timer wall_;   // for the progress line's rate
  Kokkos::Timer clock_;  // a stretch's seconds
  std::int64_t it_ = 0, first_measured_ = -1, save_at_ = 0;
};

}  // namespace

TrainResult train(const Config& c, const Epoch& epoch, Stepper& stepper, const Evaluation& eval,
                  Timers& timers, const TrainHooks& hooks) {
  return TrainingLoop(c, epoch, stepper, eval, timers, hooks).run();
}

}  // namespace minisgd
