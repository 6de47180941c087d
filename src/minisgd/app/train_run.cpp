#include "minisgd/app/train_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "minisgd/app/auto_s.hpp"
#include "minisgd/app/capabilities.hpp"
#include "minisgd/app/checkpoint.hpp"
#include "minisgd/app/collective.hpp"
#include "minisgd/comm/factory.hpp"
#include "minisgd/compress/compressor.hpp"
#include "minisgd/core/profiling.hpp"
#include "minisgd/data/loader.hpp"
#include "minisgd/data/share.hpp"
#include "minisgd/precision/dispatch.hpp"
#include "minisgd/report/timers.hpp"
#include "minisgd/solvers/evaluator.hpp"
#include "minisgd/solvers/step_probe.hpp"
#include "minisgd/solvers/stepper_factory.hpp"

namespace minisgd {
namespace {

/// Everything one training run holds while it runs; the stepper refers to the data, the
/// timers and the communicator, so a Setup stays where it was built.
template <class S>
struct Setup {
  explicit Setup(const Config& deck) : config(deck), timers(deck.output.phase_timers) {}
  Config config;  // the deck's, with what set-up decides (solver.s: auto, eta0: auto)
  nlohmann::json s_auto;
  nlohmann::json step_size_auto;
  std::unique_ptr<comm::Communicator> comm;  // training traffic only
  Timers timers;
  LoadStats load;
  Dataset<S> data;
  Dataset<S> test;
  std::unique_ptr<Stepper> stepper;
  std::string resume;  // this rank's state from run.restart
  double setup_seconds = 0;
  Kokkos::Timer since_start;  // solver.time_limit counts from here
};

/// The communicator of the training traffic. NCCL needs a GPU on every rank before its
/// collective initialization starts: checked here, on all ranks, first.
std::unique_ptr<comm::Communicator> training_communicator(const Config& c,
                                                          comm::MpiCommunicator& world) {
  if (c.comm.backend == CommBackend::nccl) {
    std::string why;
    const int ok = world.allreduce_value(gpu::visible_devices(&why) > 0 ? 1 : 0, comm::Op::min);
    if (!ok) throw InputError("comm.backend: nccl: " + (why.empty() ? "a rank sees no GPU" : why));
    if (!gpu::nccl_build_reason().empty())
      throw InputError("comm.backend: nccl " + gpu::nccl_build_reason());
  }
  return comm::make_communicator(c.comm, world.native());
}

void print_problem(const Config& c, const Partition& part, const std::string& description,
                   int ranks, std::ostream& out) {
  const std::int64_t b = c.solver.batch_size;
  out << "problem: " << description << ", " << to_string(c.model.loss)
      << " loss, l2 = " << c.model.l2
      << (c.model.free_intercept() ? ", unregularized intercept"
          : c.model.intercept      ? ", intercept"
                                   : "")
      << "\n"
      << "solver:  " << to_string(c.solver.method) << ", " << to_string(c.solver.decomposition)
      << " decomposition, "
      << (c.solver.method == Method::ca_sgd ? "s = " + std::to_string(c.solver.s) + ", " : "")
      << to_string(c.precision.preset) << ", batch " << b << ", " << part.whole_batches()
      << " batches"
      << (part.last_batch_rows() > 0
              ? " and one of " + std::to_string(part.last_batch_rows()) + " rows"
              : std::string())
      << " per epoch, " << ranks << " rank(s)\n";
}

/// CA-SGD's buffers checked before they are allocated (CaSgdStepper): the packed Gram of s
/// blocks of b rows with the margins (one message, in the arithmetic's width and again in each
/// narrower wire container), u, v, w and its gradient (and their averages), and the gathered
/// s·b rows of the rank's `cols` columns in the Gram's input type. With cols = 0, before the
/// data are read: what s and b alone ask. longest >= 0: the share is sparse, and each gathered
/// row holds at most that many entries (values, and 4-byte indices beside them).
void ensure_ca_sgd_fits(const Config& c, std::int64_t cols, comm::Communicator& comm,
                        std::int64_t longest = -1) {
  const precision::Realization& r = c.precision.realized;
  const auto bytes = [](precision::Format f) {
    return (long double)(precision::bytes_per_value(f));
  };
  const long double b = (long double)(c.solver.batch_size), sb = c.solver.s * b;
  const long double message = sb * (sb - b) / 2 + sb, A = bytes(r.compute);
  // u and v of s·b entries, w and its gradient of cols; averaging adds one of each.
  const long double vectors = c.solver.averaging != Averaging::none ? 3 : 2;
  const long double gathered =
      longest < 0 ? bytes(r.gram_input) * sb * (long double)(cols)
                  : (bytes(r.gram_input) + 4) * sb * (long double)(longest) + 8 * (sb + 1);
  long double need = A * (message + vectors * (sb + (long double)(cols))) + gathered;
  if (r.wire != r.compute) need += bytes(r.wire) * message;
  if (r.margins_wire != r.compute && r.margins_wire != r.wire)
    need += bytes(r.margins_wire) * message;
  ensure_fits(need,
              "solver.s = " + std::to_string(c.solver.s) + " x solver.batch_size = " +
                  std::to_string(c.solver.batch_size) + ": CA-SGD's Gram and buffers",
              comm);
}

/// eta0: auto's choice for the report (step_size_auto); its seconds are the slowest rank's.
nlohmann::json report_probe(const StepProbe& p, double seconds, comm::MpiCommunicator& world) {
  nlohmann::json candidates = nlohmann::json::array();
  for (const auto& k : p.candidates)
    candidates.push_back(
        {{"eta0", k.eta0}, {"loss", std::isfinite(k.loss) ? nlohmann::json(k.loss) : nullptr}});
  return {{"eta0", p.eta0},
          {"sample_rows", p.sample_rows},
          {"steps", p.steps},
          {"seconds", world.allreduce_value(seconds, comm::Op::max)},
          {"candidates", candidates}};
}

void print_probe(const StepProbe& p, double seconds, std::ostream& out) {
  out << "eta0: auto: " << p.candidates.size() << " candidates, " << p.steps << " steps on "
      << p.sample_rows << " rows each; sample objective";
  for (const auto& k : p.candidates) {
    char cell[64];
    std::snprintf(cell, sizeof cell, " %.4g:%.6g", k.eta0, k.loss);
    out << cell;
  }
  char tail[96];
  std::snprintf(tail, sizeof tail, "; chosen eta0 = %.6g (%.3g s)\n", p.eta0, seconds);
  out << tail;
}

template <class S>
void set_up(comm::MpiCommunicator& world, std::ostream& out, std::ostream& err, Setup<S>& s) {
  Config& c = s.config;
  collectively(world, err, [&] { s.comm = training_communicator(c, world); });
  // A Gram that cannot fit is refused before the data are read, not after.
  if (c.solver.method == Method::ca_sgd && !c.solver.s_auto)
    collectively(world, err, [&] { ensure_ca_sgd_fits(c, 0, world); });
  collectively(world, err, [&] {
    auto t = s.timers.scope("load");
    s.data = load_training_data<S>(c, world, s.load);
    if (!c.data.test_path.empty()) s.test = load_test_data<S>(c, world, s.data, s.load);
  });
  if (c.solver.s_auto)  // every rank decides alike (same file, same problem)
    collectively(world, err, [&] {
      std::ostringstream said;
      s.s_auto = choose_s(c, s.data.part.cols, s.data.part.rows, world.size(), said);
      if (world.rank() == 0) out << said.str();
    });
  if (world.rank() == 0) print_problem(c, s.data.part, s.data.description, world.size(), out);
  // Set-up a precision plan needs (casts, packing, scaling) counts in the time to target.
  if (c.solver.method == Method::ca_sgd)  // now with the data's columns (and rows, if sparse)
    collectively(world, err, [&] {
      ensure_ca_sgd_fits(c, s.data.part.local_cols(), world,
                         s.data.sparse() ? longest_row(s.data.csr) : -1);
    });
  if (c.solver.method == Method::sgd)
    collectively(world, err, [&] {
      // SGD's vectors of the rank's columns: w, g (none for a lazy sparse step), the reduced g
      // (row decomposition), the optimizer's and the average's state; 4 bytes each, a lower
      // bound (compressor state and fp64 arithmetic come on top): a hashed d of 2^30 is
      // refused, not killed by the OOM killer.
      const std::int64_t cols = s.data.part.local_cols();
      const bool lazy = kHostMemory && s.data.sparse() &&  // as SgdStepper decides
                        c.solver.optimizer == OptimizerKind::sgd &&
                        c.solver.averaging == Averaging::none &&
                        (s.data.part.decomposition == Decomposition::column ||
                         (world.size() == 1 && c.compression.method == CompressionMethod::none));
      const int vectors = 1 + (lazy ? 0 : 1) +
                          (s.data.part.decomposition == Decomposition::row ? 1 : 0) +
                          (c.solver.optimizer == OptimizerKind::adam       ? 2
                           : c.solver.optimizer == OptimizerKind::momentum ? 1
                                                                           : 0) +
                          (c.solver.averaging != Averaging::none ? 1 : 0);
      const std::string key = c.data.hash_bits > 0
                                  ? "data.hash_bits = " + std::to_string(c.data.hash_bits)
                                  : std::string("the data's features");
      // The compressor's buffers (row decomposition), some of them P gradients long.
      const double compressor =
          s.data.part.decomposition == Decomposition::row
              ? compress::state_bytes(c.compression, std::size_t(cols), world.size(), 4)
              : 0.0;
      ensure_fits(
          4.0L * vectors * cols + compressor,
          key + ": SGD's w, g and solver.optimizer state (" + std::to_string(vectors) +
              " vectors of " + std::to_string(cols) + " columns, at least)" +
              (compressor > 0
                   ? " and compression.method = " + std::string(to_string(c.compression.method)) +
                         "'s buffers at " + std::to_string(world.size()) + " rank(s)"
                   : ""),
          world);
    });
  Kokkos::Timer clock;
  if (c.solver.step_size.eta0_auto)  // its time is set-up time (the time to target counts it)
    collectively(world, err, [&] {
      const StepProbe probe = probe_step_size(c, s.data, *s.comm, world);
      c.solver.step_size.eta0 = probe.eta0;
      s.step_size_auto = report_probe(probe, clock.seconds(), world);
      if (world.rank() == 0) print_probe(probe, s.step_size_auto["seconds"], out);
    });
  s.stepper = make_stepper(c, s.data, *s.comm, s.timers);
  fence("stepper set up");
  s.setup_seconds = clock.seconds();
  // The communication library's first calls of each message size, outside the training time;
  // the counters then count training alone.
  s.stepper->warm_up(group_sizes(c, epoch_of(s.data.part), s.stepper->group_size()));
  s.comm->reset_stats();
  if (!c.run.restart.empty())
    collectively(world, err, [&] { s.resume = read_checkpoint(c, world); });
}

std::vector<double> gather_weights(const Vector<double>& local, const Partition& p,
                                   comm::Communicator& comm) {
  auto h = Kokkos::create_mirror_view_and_copy(HostSpace(), local);
  std::vector<double> w(p.cols, 0.0);
  for (std::int64_t j = 0; j < p.local_cols(); ++j) w[p.col_begin() + j] = h(j);
  if (p.decomposition == Decomposition::column) comm.allreduce(w.data(), w.size());
  return w;
}

/// run.min_seconds (docs/procurement.md, "Run rules"): the deck's training again, from a new
/// stepper (the initial weights and state), until the FOM windows of all repetitions add up to
/// at least min_seconds on the slowest rank. The first repetition stays the run's result
/// (history, verdict, time to target, weights); the FOM counts every repetition's window, and
/// every repetition's final loss must agree with the first within the deck's tolerance.
template <class S>
void repeat_for_min_seconds(comm::MpiCommunicator& world, std::ostream& out, std::ostream& err,
                            Setup<S>& s, const Evaluation& eval, Trained& t) {
  const Config& c = s.config;
  const bool root = world.rank() == 0;
  const double first = t.result.final_loss;
  double window = world.allreduce_value(t.result.fom_seconds, comm::Op::max);
  double next_line = 0.1 * c.run.min_seconds;
  RunRule& rule = t.rule;
  rule.min_seconds = c.run.min_seconds;
  if (t.result.fom_iterations == 0)  // the same on every rank: the steps do not depend on P
    throw InputError("run.min_seconds: the training has no step after the warm-up to time");
  while (window < c.run.min_seconds) {
    TrainResult again;
    collectively(world, err, [&] {
      Region region("minisgd::train");
      TrainHooks hooks;
      hooks.elapsed = [&] { return s.since_start.seconds(); };
      hooks.clock_max = [&](double x) { return world.allreduce_value(x, comm::Op::max); };
      hooks.progress = [](const std::string&) {};
      s.stepper.reset();
      s.stepper = make_stepper(c, s.data, *s.comm, s.timers);
      fence("stepper set up");
      again = train(c, epoch_of(s.data.part), *s.stepper, eval, s.timers, hooks);
      // Every rank holds the same objective, so every rank throws alike.
      const double gap = std::abs(again.final_loss - first) / std::abs(first);
      if (gap > c.validation.tolerance)
        throw RuntimeFailure("run.min_seconds: repetition " + std::to_string(rule.repetitions + 1) +
                             " ended at loss " + std::to_string(again.final_loss) +
                             ", the first at " + std::to_string(first) +
                             ": further from it than validation.tolerance");
      rule.loss_spread = std::max(rule.loss_spread, gap);
    });
    ++rule.repetitions;
    t.steps += again.iterations;
    t.result.fom_iterations += again.fom_iterations;
    t.result.fom_samples += again.fom_samples;
    t.result.fom_seconds += again.fom_seconds;  // this rank's; the report takes the maximum
    window = world.allreduce_value(t.result.fom_seconds, comm::Op::max);
    if (root && (window >= next_line || window >= c.run.min_seconds)) {
      out << "run rule: repetition " << rule.repetitions << ", FOM window " << window << " s of "
          << "run.min_seconds " << c.run.min_seconds << " s" << std::endl;
      next_line = window + 0.1 * c.run.min_seconds;
    }
  }
}

template <class S>
Trained train_and_measure(comm::MpiCommunicator& world, std::ostream& out, std::ostream& err,
                          Setup<S>& s) {
  const Config& c = s.config;
  Evaluator<S> evaluator(c, s.data, world);
  Evaluator<S> test_evaluator(c, s.test, world);
  Evaluation eval{[&](const Vector<double>& w) { return evaluator.objective(w); }, {}};
  if (!c.data.test_path.empty())
    eval.test_loss = [&](const Vector<double>& w) { return test_evaluator.mean_loss(w); };
  const bool root = world.rank() == 0;
  Trained t;
  collectively(world, err, [&] {
    Region region("minisgd::train");
    injected_failure("train", world.rank());
    injected_escape("train", world.rank());
    TrainHooks hooks;
    hooks.elapsed = [&] { return s.since_start.seconds(); };
    hooks.clock_max = [&](double t) { return world.allreduce_value(t, comm::Op::max); };
    hooks.progress = [&](const std::string& line) {
      if (root) out << line << std::endl;
    };
    if (!c.output.checkpoint.path.empty()) {
      hooks.checkpoints.every = c.output.checkpoint.every;
      hooks.checkpoints.write = [&](std::int64_t it, const std::string& state) {
        write_checkpoint(c, world, it, state);
        if (root)
          out << "checkpoint: " << c.output.checkpoint.path << " after step " << it << std::endl;
      };
    }
    hooks.checkpoints.resume = std::move(s.resume);
    t.result = train(c, epoch_of(s.data.part), *s.stepper, eval, s.timers, hooks);
  });
  t.weights = gather_weights(s.stepper->local_weights(), s.data.part, world);
  t.steps = t.result.iterations - t.result.resumed_at;
  if (c.run.min_seconds > 0) repeat_for_min_seconds(world, out, err, s, eval, t);
  t.setup_seconds = s.setup_seconds;
  t.columns = s.data.part.cols;
  t.traffic = s.comm->stats();
  t.problem = {{"description", s.data.description},
               {"rows", s.data.part.rows},
               {"features", s.data.features},
               {"columns", s.data.part.cols},
               {"layout", s.data.sparse() ? "sparse" : "dense"},
               {"matrix_bytes_per_rank", s.data.matrix_bytes()}};
  // Every stored value is on one rank in either decomposition: the shares' counts add up.
  if (s.data.sparse()) t.problem["nonzeros"] = world.allreduce_value(s.data.csr.nnz());
  t.data_load = to_json(s.load, world);
  t.kernels = s.stepper->kernels();
  t.compression = s.stepper->compression();
  t.timers = s.timers.summary(world);
  t.timers_fenced = s.timers.fenced();
  t.s_auto = s.s_auto;
  t.step_size_auto = s.step_size_auto;
  return t;
}

}  // namespace

Trained set_up_and_train(const Config& c, comm::MpiCommunicator& world, std::ostream& out,
                         std::ostream& err) {
  // X is stored in the container of precision.data, as realized when the deck was read.
  return precision::with_compiled_type(c.precision.realized.storage, [&](auto tag) {
    Setup<typename decltype(tag)::type> s(c);
    set_up(world, out, err, s);
    return train_and_measure(world, out, err, s);
  });
}

}  // namespace minisgd
