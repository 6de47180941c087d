#include "minisgd/solvers/trainer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "minisgd/core/errors.hpp"
#include "minisgd/data/partition.hpp"
#include "minisgd/solvers/schedule.hpp"

namespace minisgd {

TrainResult train(const Config& c, std::int64_t nb, Stepper& stepper, const Evaluation& eval,
                  Timers& timers, const std::function<double(double)>& clock_max,
                  const std::function<void(const std::string&)>& progress) {
  const SolverConfig& s = c.solver;
  std::int64_t total = static_cast<std::int64_t>(std::ceil(s.epochs * double(nb)));
  if (s.max_iters > 0) total = s.epochs > 0 ? std::min(total, s.max_iters) : s.max_iters;
  const std::int64_t every = s.eval_every > 0 ? s.eval_every : nb;
  const double nan = std::numeric_limits<double>::quiet_NaN();

  TrainResult r;
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
    char line[160];
    std::snprintf(line, sizeof line, "epoch %8.3f  iter %10lld  loss %.8e  time %8.3f s",
                  h.epoch, static_cast<long long>(it), h.loss, h.seconds);
    progress(line);
    return h.loss;
  };

  r.initial_loss = evaluate(0);
  r.stop_reason = "iterations";
  std::vector<std::int64_t> order;
  std::int64_t order_epoch = -1;
  std::vector<StepSpec> group;
  std::int64_t it = 0;
  Kokkos::Timer clock;
  while (it < total) {
    // A group never crosses an evaluation point or the end.
    const std::int64_t next_eval = (it / every + 1) * every;
    const std::int64_t end = std::min({it + stepper.group_size(), next_eval, total});
    group.clear();
    for (std::int64_t t = it; t < end; ++t) {
      const std::int64_t e = t / nb;
      if (e != order_epoch) {
        order = batch_order(nb, c.run.seed, e, s.reshuffle);
        order_epoch = e;
      }
      const double eta = step_size(s.step_size, t, e);
      group.push_back({order[t % nb], eta, 1.0 - eta * c.model.l2});
    }
    fence();
    clock.reset();
    stepper.advance(group);
    fence();
    r.train_seconds += clock.seconds();
    it = end;
    if (it % every == 0 || it == total) {
      const double loss = evaluate(it);
      if (s.target_loss && loss <= *s.target_loss) {
        r.stop_reason = "target_loss";
        break;
      }
      if (s.time_limit > 0 && clock_max(r.train_seconds) >= s.time_limit) {
        r.stop_reason = "time_limit";
        break;
      }
    }
  }
  r.iterations = it;
  r.epochs = double(it) / double(nb);
  r.final_loss = r.history.back().loss;
  return r;
}

}  // namespace minisgd
