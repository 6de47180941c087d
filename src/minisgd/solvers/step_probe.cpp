#include "minisgd/solvers/step_probe.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "minisgd/core/errors.hpp"
#include "minisgd/report/timers.hpp"
#include "minisgd/solvers/evaluator.hpp"
#include "minisgd/solvers/stepper_factory.hpp"
#include "minisgd/solvers/trainer.hpp"

namespace minisgd {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Candidates η₀ = 2^(k/2) for k in [kLowest, kHighest]: 1e-12 to 1e6.
constexpr int kLowest = -80, kHighest = 40;

/// a beats b: lower by more than 1e-9 relative (a sum's order moves the last bits only).
bool beats(double a, double b) {
  if (!std::isfinite(a)) return false;
  if (!std::isfinite(b)) return true;
  return a < b - 1e-9 * std::fabs(b);
}

}  // namespace

template <class S>
StepProbe probe_step_size(const Config& c, const Dataset<S>& data, comm::Communicator& train_comm,
                          comm::Communicator& eval_comm) {
  const Partition& p = data.part;
  const Epoch run = epoch_of(p);
  const std::int64_t b = c.solver.batch_size;
  const std::int64_t k = std::max((kProbeSampleRows + b - 1) / b, kProbeSampleBatches);  // batches
  const bool all = k >= run.batches();
  const Epoch sample = all ? run : Epoch(k);
  StepProbe out;
  out.sample_rows = all ? p.rows : k * b;
  const std::int64_t local_rows = all ? p.local_rows() : p.batch_first(k);

  // The run in small: its epochs as passes over the sample, nothing that stops it early.
  Config probe = c;
  auto& s = probe.solver;
  const double epochs = double(planned_steps(c.solver, run.batches())) / double(run.batches());
  s.epochs = std::min(epochs, kProbeMaxPasses);
  s.max_iters = 0;
  s.target_loss.reset();
  s.time_limit = 0;
  s.step_size.eta0_auto = false;
  out.steps = planned_steps(s, sample.batches());
  s.eval_every = out.steps;  // the objective at the start and at the end only
  probe.run.min_seconds = 0;
  probe.output.checkpoint = {};

  Evaluator<S> evaluator(probe, data, eval_comm, local_rows, out.sample_rows);
  const Evaluation eval{[&](const Vector<double>& w) { return evaluator.objective(w); }, {}};
  Timers timers;  // the probe's phases stay out of the run's timers
  TrainHooks hooks;
  hooks.elapsed = [] { return 0.0; };
  hooks.clock_max = [](double t) { return t; };
  hooks.progress = [](const std::string&) {};

  std::map<int, double> loss;  // by k, η₀ = 2^(k/2)
  const auto cost = [&](int at) {
    const auto it = loss.find(at);
    if (it != loss.end()) return it->second;
    s.step_size.eta0 = std::pow(2.0, 0.5 * at);
    double f = kInf;
    try {
      const auto stepper = make_stepper(probe, data, train_comm, timers);
      f = train(probe, sample, *stepper, eval, timers, hooks).final_loss;
    } catch (const RuntimeFailure&) {  // diverged: every rank sees the same objective
    }
    if (!std::isfinite(f)) f = kInf;
    loss[at] = f;
    out.candidates.push_back({s.step_size.eta0, f});
    return f;
  };
  int best = 0;
  while (!std::isfinite(cost(best)) && best > kLowest) best -= 2;
  if (!std::isfinite(cost(best)))
    throw RuntimeFailure("solver.step_size.eta0: auto: every step size down to " +
                         std::to_string(std::pow(2.0, 0.5 * best)) + " diverged on the sample");
  const int start = best;
  while (best < kHighest && beats(cost(best + 2), cost(best))) best += 2;
  if (best == start)
    while (best > kLowest && beats(cost(best - 2), cost(best))) best -= 2;
  cost(best - 1);
  cost(best + 1);
  for (const auto& [at, f] : loss)  // ascending k: a tie keeps the smaller η₀
    if (beats(f, loss[best])) best = at;
  out.eta0 = std::pow(2.0, 0.5 * best);
  return out;
}

template StepProbe probe_step_size(const Config&, const Dataset<double>&, comm::Communicator&,
                                   comm::Communicator&);
template StepProbe probe_step_size(const Config&, const Dataset<float>&, comm::Communicator&,
                                   comm::Communicator&);
template StepProbe probe_step_size(const Config&, const Dataset<precision::bf16>&,
                                   comm::Communicator&, comm::Communicator&);
template StepProbe probe_step_size(const Config&, const Dataset<precision::fp16>&,
                                   comm::Communicator&, comm::Communicator&);

}  // namespace minisgd
