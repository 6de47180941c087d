#include "minisgd/app/run.hpp"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <memory>
#include <sstream>

#include "minisgd/app/collective.hpp"
#include "minisgd/app/study.hpp"
#include "minisgd/comm/emulated_network.hpp"
#include "minisgd/comm/mpi_communicator.hpp"
#ifdef MINISGD_HAVE_NCCL
#include "minisgd/comm/nccl_communicator.hpp"
#endif
#include "minisgd/app/capabilities.hpp"
#include "minisgd/app/provenance.hpp"
#include "minisgd/core/profiling.hpp"
#include "minisgd/data/loader.hpp"
#include "minisgd/precision/dispatch.hpp"
#include "minisgd/report/output_files.hpp"
#include "minisgd/report/time_to_target.hpp"
#include "minisgd/solvers/evaluator.hpp"
#include "minisgd/solvers/stepper_factory.hpp"
#include "minisgd/version.hpp"

namespace minisgd {
namespace {

/// Counters of `comm`, reduced over `world` (host buffers, whatever backend `comm` is).
nlohmann::json comm_summary(comm::Communicator& comm, comm::Communicator& world) {
  nlohmann::json out = nlohmann::json::object();
  const comm::Stats st = comm.stats();  // a copy: the reductions below are counted too
  for (int k = 0; k < int(comm::Kind::count_); ++k) {
    const auto kind = comm::Kind(k);
    const comm::KindStats& s = st[kind];
    // Ranks may differ (roots, p2p patterns): report the maximum over ranks.
    const auto calls = world.allreduce_value<std::uint64_t>(s.calls, comm::Op::max);
    const auto bytes = world.allreduce_value<std::uint64_t>(s.bytes_sent, comm::Op::max);
    const double secs = world.allreduce_value(s.seconds, comm::Op::max);
    if (calls > 0)
      out[comm::name(kind)] = {{"calls", calls}, {"bytes_sent", bytes}, {"seconds", secs}};
  }
  return out;
}

/// The compressor with its bytes per step (maximum over ranks of everything the training
/// communicator sent) and their ratio to a dense fp32 AllReduce, 2(P−1)/P·4d bytes.
nlohmann::json compression_summary(nlohmann::json described, const comm::Stats& training,
                                   comm::Communicator& world, std::int64_t d, std::int64_t steps) {
  const auto bytes = world.allreduce_value<std::uint64_t>(training.total_bytes(), comm::Op::max);
  const int P = world.size();
  const double per_step = steps > 0 ? double(bytes) / double(steps) : 0.0;
  const double dense = 2.0 * (P - 1) / P * 4.0 * double(d);
  described["bytes_per_step"] = per_step;
  described["dense_fp32_bytes_per_step"] = dense;
  described["ratio_to_dense"] =
      dense > 0 ? nlohmann::json(per_step / dense) : nlohmann::json(nullptr);
  return described;
}

std::vector<double> gather_weights(const Vector<double>& local, const Partition& p,
                                   comm::Communicator& comm) {
  auto h = Kokkos::create_mirror_view_and_copy(HostSpace(), local);
  std::vector<double> w(p.cols, 0.0);
  for (std::int64_t j = 0; j < p.local_cols(); ++j) w[p.col_begin() + j] = h(j);
  if (p.decomposition == Decomposition::column) comm.allreduce(w.data(), w.size());
  return w;
}

/// A communicator of its own for the training traffic, behind the modelled network if asked.
std::unique_ptr<comm::Communicator> training_communicator(const Config& c,
                                                          comm::MpiCommunicator& world) {
  std::unique_ptr<comm::Communicator> base;
  if (c.comm.backend == CommBackend::nccl) {
    // Every rank must see a GPU before NCCL's collective initialization starts.
    std::string why;
    const int ok = world.allreduce_value(gpu::visible_devices(&why) > 0 ? 1 : 0, comm::Op::min);
    if (!ok) throw InputError("comm.backend: nccl: " + (why.empty() ? "a rank sees no GPU" : why));
#ifdef MINISGD_HAVE_NCCL
    base = std::make_unique<comm::NcclCommunicator>(world.native(), Kokkos::Cuda().cuda_stream());
#else
    throw InputError("comm.backend: nccl " + gpu::nccl_build_reason());
#endif
  } else {
    base = std::make_unique<comm::MpiCommunicator>(world.native(), c.comm.gpu_aware);
  }
  if (!c.comm.emulated()) return base;
  return std::make_unique<comm::EmulatedNetwork>(std::move(base), c.comm.latency_us * 1e-6,
                                                 c.comm.bandwidth_GBps * 1e9);
}

template <class T>
RunOutcome run_typed(const Config& c, comm::MpiCommunicator& world, std::ostream& out,
                     std::ostream& err) {
  const bool root = world.rank() == 0;
  std::unique_ptr<comm::Communicator> train_comm_ptr;  // a refused GPU backend: exit 2 on all ranks
  collectively(world, err, [&] { train_comm_ptr = training_communicator(c, world); });
  comm::Communicator& train_comm = *train_comm_ptr;  // training traffic only
  Timers timers(c.output.phase_timers);
  Dataset<T> data;
  Dataset<T> test;
  LoadStats load;
  collectively(world, err, [&] {
    auto t = timers.scope("load");
    data = load_training_data<T>(c, world, load);
    if (!c.data.test_path.empty()) test = load_test_data<T>(c, world, data.features, load);
  });
  const std::int64_t b = c.solver.batch_size;
  const std::int64_t nb = data.part.rows / b;
  if (root) {
    out << "problem: " << data.description << ", " << to_string(c.model.loss)
        << " loss, l2 = " << c.model.l2 << (c.model.intercept ? ", intercept" : "") << "\n"
        << "solver:  " << to_string(c.solver.method) << ", " << to_string(c.solver.decomposition)
        << " decomposition, "
        << (c.solver.method == Method::ca_sgd ? "s = " + std::to_string(c.solver.s) + ", " : "")
        << to_string(c.precision.preset) << ", batch " << b << ", " << nb << " batches per epoch, "
        << world.size() << " rank(s)\n";
  }

  // Set-up a precision plan needs (casts, packing, scaling) counts in the time to target.
  Kokkos::Timer setup_clock;
  const std::unique_ptr<Stepper> stepper = make_stepper(c, data, train_comm, timers);
  fence("stepper set up");
  const double setup_seconds = setup_clock.seconds();
  Evaluator<T> evaluator(c, data, world);
  Evaluator<T> test_evaluator(c, test, world);
  Evaluation eval{[&](const Vector<double>& w) { return evaluator.objective(w); }, {}};
  if (!c.data.test_path.empty())
    eval.test_loss = [&](const Vector<double>& w) { return test_evaluator.mean_loss(w); };

  RunOutcome o;
  collectively(world, err, [&] {
    Region region("minisgd::train");
    injected_failure("train", world.rank());
    o.result = train(
        c, nb, *stepper, eval, timers,
        [&](double s) { return world.allreduce_value(s, comm::Op::max); },
        [&](const std::string& line) {
          if (root) out << line << std::endl;
        });
  });
  const TrainResult& r = o.result;
  o.weights = gather_weights(stepper->local_weights(), data.part, world);

  // Verdict: relative distance to the reference, or (without one) a finite loss that fell.
  const auto& v = c.validation;
  std::string why;
  if (v.reference_loss) {
    const double gap = std::fabs(r.final_loss - *v.reference_loss) / std::fabs(*v.reference_loss);
    o.valid = gap <= v.tolerance;
    std::ostringstream s;
    s << "final loss " << std::setprecision(8) << r.final_loss << ", reference "
      << *v.reference_loss << ", relative gap " << std::setprecision(3) << gap
      << (o.valid ? " <= " : " > ") << "tolerance " << v.tolerance;
    why = s.str();
  } else {
    o.valid = std::isfinite(r.final_loss) && r.final_loss <= r.initial_loss;
    why = "no validation.reference_loss: final loss " + std::to_string(r.final_loss) +
          (o.valid ? " <= " : " > ") + "initial loss " + std::to_string(r.initial_loss);
  }
  o.exit_code = o.valid ? kValid : kInvalid;
  // The FOM window: every step after the warm-up, fenced at its ends only (trainer.cpp); its
  // time is the slowest rank's.
  const double fom_seconds = world.allreduce_value(r.fom_seconds, comm::Op::max);
  const double samples_per_s = fom_seconds > 0 ? double(r.fom_iterations * b) / fom_seconds : 0;
  const TimeToTarget ttt = time_to_target(r.history, v.reference_loss, v.tolerance, setup_seconds);
  const double ttt_seconds = world.allreduce_value(ttt.local_seconds, comm::Op::max);
  const nlohmann::json ttt_s = ttt.iteration ? nlohmann::json(ttt_seconds) : nullptr;

  Region report_region("minisgd::report");
  nlohmann::json& rep = o.report;
  rep = provenance(world.native());
  rep["deck"] = c.resolved;
  rep["deck_path"] = c.deck_path;
  rep["problem"] = {{"description", data.description},
                    {"rows", data.part.rows},
                    {"features", data.features},
                    {"columns", data.part.cols},
                    {"matrix_bytes_per_rank", data.matrix_bytes()}};
  rep["data_load"] = to_json(load, world);
  rep["result"] = {
      {"final_loss", r.final_loss},
      {"initial_loss", r.initial_loss},
      {"iterations", r.iterations},
      {"epochs", r.epochs},
      {"stop_reason", r.stop_reason},
      {"train_time_s", world.allreduce_value(r.train_seconds, comm::Op::max)},
      {"samples_per_s", samples_per_s},
      {"warmup_iterations", r.warmup_iterations},
      {"fom_iterations", r.fom_iterations},
      {"fom_time_s", fom_seconds},
      {"valid", o.valid},
      {"verdict", why},
      {"reference_loss", v.reference_loss ? nlohmann::json(*v.reference_loss) : nullptr},
      {"tolerance", v.tolerance},
      {"time_to_target",
       {{"target_loss", ttt.target ? nlohmann::json(*ttt.target) : nullptr},
        {"reached", bool(ttt.iteration)},
        {"seconds", ttt_s},
        {"iteration", ttt.iteration ? nlohmann::json(*ttt.iteration) : nullptr},
        {"epoch", ttt.iteration ? nlohmann::json(ttt.epoch) : nullptr},
        {"setup_s", world.allreduce_value(setup_seconds, comm::Op::max)},
        {"why_not", ttt.iteration ? nullptr : nlohmann::json(ttt.why_not)}}}};
  if (!r.history.empty() && std::isfinite(r.history.back().test_loss))
    rep["result"]["test_loss"] = r.history.back().test_loss;
  rep["precision"] = precision::to_json(c.precision.plan);
  rep["kernels"] = stepper->kernels();
  rep["timers"] = timers.summary(world);
  rep["timers_fenced"] = timers.fenced();
  rep["compression"] = compression_summary(stepper->compression(), train_comm.stats(), world,
                                           data.part.cols, r.iterations);
  rep["comm"] = comm_summary(train_comm, world);
  if (c.comm.emulated())
    rep["comm_emulation"] = {{"latency_us", c.comm.latency_us},
                             {"bandwidth_GBps", c.comm.bandwidth_GBps},
                             {"note", "communication times include a modelled network: emulated"}};
  rep["fom"] = {{"name", "samples_per_s"}, {"value", samples_per_s}, {"time_to_target_s", ttt_s}};

  if (root) {
    print_summary(out, rep);
    collectively(world, err, [&] { write_outputs(c, o.report, r.history, o.weights); });
  } else {
    collectively(world, err, [] {});
  }
  return o;
}

}  // namespace

RunOutcome run(const Config& c, MPI_Comm world_comm, std::ostream& out, std::ostream& err) {
  comm::MpiCommunicator world(world_comm);
  if (world.rank() == 0)
    out << "minisgd " << MINISGD_VERSION << " (" << MINISGD_GIT_HASH << "), Kokkos "
        << ExecSpace::name() << ", " << world.size() << " MPI rank(s), deck " << c.deck_path
        << std::endl;
  if (c.run.study == Study::precision) return run_precision_study(c, world_comm, out, err);
  // X is stored in the container of precision.data (fp32 or fp64 for sgd).
  return precision::with_compiled_type(precision::realize(c.precision.plan).storage, [&](auto tag) {
    return run_typed<typename decltype(tag)::type>(c, world, out, err);
  });
}

}  // namespace minisgd
