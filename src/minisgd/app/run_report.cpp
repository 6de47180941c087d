#include "minisgd/app/run_report.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

#include "minisgd/app/collective.hpp"
#include "minisgd/app/provenance.hpp"
#include "minisgd/core/profiling.hpp"
#include "minisgd/report/output_files.hpp"
#include "minisgd/report/time_to_target.hpp"

namespace minisgd {
namespace {

/// The training communicator's counters, reduced over `world`.
nlohmann::json comm_summary(const comm::Stats& st, comm::Communicator& world) {
  nlohmann::json out = nlohmann::json::object();
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

/// result.time_to_target: set-up plus training seconds (slowest rank) until the target.
nlohmann::json time_to_target_section(const Trained& t, const ValidationConfig& v,
                                      comm::Communicator& world) {
  const TimeToTarget ttt =
      time_to_target(t.result.history, v.reference_loss, v.tolerance, t.setup_seconds);
  const double seconds = world.allreduce_value(ttt.local_seconds, comm::Op::max);
  return {{"target_loss", ttt.target ? nlohmann::json(*ttt.target) : nullptr},
          {"reached", bool(ttt.iteration)},
          {"seconds", ttt.iteration ? nlohmann::json(seconds) : nullptr},
          {"iteration", ttt.iteration ? nlohmann::json(*ttt.iteration) : nullptr},
          {"epoch", ttt.iteration ? nlohmann::json(ttt.epoch) : nullptr},
          {"setup_s", world.allreduce_value(t.setup_seconds, comm::Op::max)},
          {"why_not", ttt.iteration ? nullptr : nlohmann::json(ttt.why_not)}};
}

nlohmann::json result_section(const Config& c, const Trained& t, const Verdict& verdict,
                              comm::Communicator& world) {
  const TrainResult& r = t.result;
  const auto& v = c.validation;
  // The FOM window: every step after the warm-up, fenced at its ends only (trainer.cpp); its
  // time is the slowest rank's.
  const double fom_seconds = world.allreduce_value(r.fom_seconds, comm::Op::max);
  const double samples_per_s = fom_seconds > 0 ? double(r.fom_samples) / fom_seconds : 0;
  nlohmann::json result = {
      {"final_loss", r.final_loss},
      {"initial_loss", r.initial_loss},
      {"iterations", r.iterations},
      {"epochs", r.epochs},
      {"stop_reason", r.stop_reason},
      {"train_time_s", world.allreduce_value(r.train_seconds, comm::Op::max)},
      {"samples_per_s", samples_per_s},
      {"warmup_iterations", r.warmup_iterations},
      {"fom_iterations", r.fom_iterations},
      {"fom_samples", r.fom_samples},
      {"fom_time_s", fom_seconds},
      {"valid", verdict.valid},
      {"verdict", verdict.why},
      {"reference_loss", v.reference_loss ? nlohmann::json(*v.reference_loss) : nullptr},
      {"tolerance", v.tolerance},
      {"time_to_target", time_to_target_section(t, v, world)}};
  // run.min_seconds: how the FOM window was filled (docs/procurement.md, "Run rules").
  result["run_rule"] = {{"min_seconds", t.rule.min_seconds},
                        {"repetitions", t.rule.repetitions},
                        {"obeyed", fom_seconds >= t.rule.min_seconds},
                        {"loss_spread", t.rule.loss_spread}};
  if (!c.run.restart.empty())
    result["restarted_from"] = {{"path", c.run.restart}, {"iteration", r.resumed_at}};
  if (r.checkpoint_at >= 0)
    result["checkpoint"] = {{"path", c.output.checkpoint.path}, {"iteration", r.checkpoint_at}};
  if (!r.history.empty() && std::isfinite(r.history.back().test_loss))
    result["test_loss"] = r.history.back().test_loss;
  return result;
}

}  // namespace

nlohmann::json build_report(const Config& c, const Trained& t, const Verdict& v,
                            comm::MpiCommunicator& world) {
  Region region("minisgd::report");
  nlohmann::json rep = provenance(world.native());
  rep["deck"] = *c.resolved;
  rep["deck_path"] = c.deck_path;
  rep["problem"] = t.problem;
  if (!t.s_auto.is_null()) rep["s_auto"] = t.s_auto;
  if (!t.step_size_auto.is_null()) rep["step_size_auto"] = t.step_size_auto;
  rep["data_load"] = t.data_load;
  rep["result"] = result_section(c, t, v, world);
  rep["precision"] = precision::to_json(c.precision.plan, c.precision.realized);
  rep["kernels"] = t.kernels;
  rep["timers"] = t.timers;
  rep["timers_fenced"] = t.timers_fenced;
  rep["compression"] = compression_summary(t.compression, t.traffic, world, t.columns,
                                           t.steps);  // this process's steps, every repetition
  rep["comm"] = comm_summary(t.traffic, world);
  if (c.comm.emulated())
    rep["comm_emulation"] = {{"latency_us", c.comm.latency_us},
                             {"bandwidth_GBps", c.comm.bandwidth_GBps},
                             {"note", "communication times include a modelled network: emulated"}};
  rep["fom"] = {{"name", "samples_per_s"},
                {"value", rep["result"]["samples_per_s"]},
                {"time_to_target_s", rep["result"]["time_to_target"]["seconds"]}};
  return rep;
}

void write_outputs_collectively(const Config& c, const nlohmann::json& report, const Trained& t,
                                comm::MpiCommunicator& world, std::ostream& err) {
  if (world.rank() == 0) {
    collectively(world, err, [&] { write_outputs(c, report, t.result.history, t.weights); });
  } else {
    collectively(world, err, [] {});
  }
}

}  // namespace minisgd
