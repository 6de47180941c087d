#include "minisgd/report/output_files.hpp"

#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "minisgd/core/atomic_file.hpp"

namespace minisgd {

void print_summary(std::ostream& out, const nlohmann::json& rep) {
  char line[200];
  out << "\ntimers (s, over ranks, "
      << (rep.value("timers_fenced", false) ? "fenced" : "unfenced: output.phase_timers")
      << ")\n                             min         mean          max\n";
  for (const auto& [phase, t] : rep["timers"].items()) {
    std::snprintf(line, sizeof line, "  %-18s %12.6f %12.6f %12.6f\n", phase.c_str(),
                  t["min"].get<double>(), t["mean"].get<double>(), t["max"].get<double>());
    out << line;
  }
  out << "communication (training, per rank, max over ranks"
      << (rep.contains("comm_emulation") ? "; EMULATED network" : "") << ")\n";
  for (const auto& [kind, s] : rep["comm"].items()) {
    std::snprintf(line, sizeof line, "  %-18s %10llu calls %14llu bytes %10.6f s\n", kind.c_str(),
                  static_cast<unsigned long long>(s["calls"].get<std::uint64_t>()),
                  static_cast<unsigned long long>(s["bytes_sent"].get<std::uint64_t>()),
                  s["seconds"].get<double>());
    out << line;
  }
  const auto& r = rep["result"];
  if (r.contains("fom_iterations")) {
    std::snprintf(line, sizeof line,
                  "\nFOM window: %lld steps after %lld warm-up steps, %.6f s (max over ranks)",
                  static_cast<long long>(r["fom_iterations"].get<std::int64_t>()),
                  static_cast<long long>(r["warmup_iterations"].get<std::int64_t>()),
                  r["fom_time_s"].get<double>());
    out << line;
  }
  if (r.contains("run_rule")) {
    const auto& rule = r["run_rule"];
    const double min_s = rule["min_seconds"].get<double>();
    if (min_s > 0)
      std::snprintf(line, sizeof line,
                    "\nrun rule: FOM window %.3f s %s run.min_seconds %g s, %d repetition(s) of "
                    "the training, final losses within %.2e",
                    r["fom_time_s"].get<double>(), rule["obeyed"].get<bool>() ? ">=" : "<", min_s,
                    rule["repetitions"].get<int>(), rule["loss_spread"].get<double>());
    else
      std::snprintf(line, sizeof line,
                    "\nrun rule: run.min_seconds 0 (one training; not an official run)");
    out << line;
  }
  std::snprintf(line, sizeof line, "\nFOM: %.6e samples/s", r["samples_per_s"].get<double>());
  out << line;
  if (r.contains("time_to_target")) {
    const auto& t = r["time_to_target"];
    if (t["reached"].get<bool>())
      std::snprintf(line, sizeof line,
                    ", time to target %.6f s (loss <= %.8g at iteration %lld, set-up %.6f s)",
                    t["seconds"].get<double>(), t["target_loss"].get<double>(),
                    static_cast<long long>(t["iteration"].get<std::int64_t>()),
                    t["setup_s"].get<double>());
    else
      std::snprintf(line, sizeof line, ", time to target: %s",
                    t["why_not"].get<std::string>().c_str());
    out << line;
  }
  out << "\n";
  if (r["stop_reason"] == "time_limit")
    out << "STOPPED: solver.time_limit spent after iteration "
        << r["iterations"].get<std::int64_t>()
        << (!r.contains("checkpoint")
                ? std::string(" (no output.checkpoint)")
                : "; checkpoint " + r["checkpoint"]["path"].get<std::string>() +
                      " to continue with run.restart")
        << std::endl;
  out << (r["valid"].get<bool>() ? "VALID" : "INVALID") << ": " << r["verdict"].get<std::string>()
      << std::endl;
}

void write_outputs(const Config& c, const nlohmann::json& report,
                   const std::vector<HistoryRow>& history, const std::vector<double>& weights) {
  const OutputConfig& o = c.output;
  if (!o.report.empty())
    write_file_atomically(o.report, [&](std::ostream& f) { f << report.dump(2) << "\n"; });
  if (!o.history.empty())
    write_file_atomically(o.history, [&](std::ostream& f) {
      f << "iteration,epoch,loss,test_loss,train_seconds\n";
      char line[160];
      for (const HistoryRow& h : history) {
        std::snprintf(line, sizeof line, "%lld,%.6f,%.17g,%.17g,%.6f\n",
                      static_cast<long long>(h.iteration), h.epoch, h.loss, h.test_loss, h.seconds);
        f << line;
      }
    });
  if (!o.weights.empty())
    write_file_atomically(o.weights, [&](std::ostream& f) {
      char line[40];
      for (double w : weights) {
        std::snprintf(line, sizeof line, "%.17g\n", w);
        f << line;
      }
    });
}

}  // namespace minisgd
