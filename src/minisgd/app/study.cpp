#include "minisgd/app/study.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include <nlohmann/json.hpp>

#include "minisgd/app/run_report.hpp"
#include "minisgd/app/train_run.hpp"
#include "minisgd/app/verdict.hpp"
#include "minisgd/core/errors.hpp"
#include "minisgd/report/output_files.hpp"

namespace minisgd {
namespace {

struct NullStream : std::ostream {
  struct Buf : std::streambuf {
    int overflow(int ch) override { return ch; }
  } buf;
  NullStream() : std::ostream(&buf) {}
};

/// The final loss of `c` trained quietly; NaN when it diverged (a finding, not a failure).
double quiet_final_loss(const Config& c, comm::MpiCommunicator& world, std::ostream& err) {
  NullStream quiet;
  try {
    return set_up_and_train(c, world, quiet, err).result.final_loss;
  } catch (const Abort& a) {
    if (a.code != kRuntimeFailure) throw;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

/// One row of the table: `knob` alone lowered to run.study_format.
nlohmann::json lowered_row(const Config& base, precision::Knob k, const precision::FormatSpec& f,
                           double reference, comm::MpiCommunicator& world, std::ostream& out,
                           std::ostream& err) {
  using namespace precision;
  Config lowered = base;
  Plan plan = base.precision.plan;
  plan[k] = f;
  lowered.precision.use(plan);
  lowered.validation.reference_loss.reset();
  const double loss = quiet_final_loss(lowered, world, err);
  const double gap = (loss - reference) / std::fabs(reference);
  const bool native = lowered.precision.realized.native[int(k)];
  if (world.rank() == 0) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-15s %-10s %.10e  %+.3e%s\n", name(k),
                  to_string(f).c_str(), loss, gap,
                  std::isfinite(loss) ? (native ? "" : "  (emulated)") : "  (diverged)");
    out << line << std::flush;
  }
  return {{"knob", name(k)},
          {"format", to_string(f)},
          {"native", native},
          {"final_loss", std::isfinite(loss) ? nlohmann::json(loss) : nullptr},
          {"relative_gap", std::isfinite(gap) ? nlohmann::json(gap) : nullptr}};
}

}  // namespace

RunOutcome run_precision_study(const Config& c, comm::MpiCommunicator& world, std::ostream& out,
                               std::ostream& err) {
  using namespace precision;
  const bool root = world.rank() == 0;
  Config base = c;
  base.run.study = Study::none;
  base.precision.preset = Preset::fp32;
  Plan fp32 = preset_plan(Preset::fp32);
  fp32.rounding = c.precision.plan.rounding;
  base.precision.use(fp32);
  if (root)
    out << "precision study: the fp32 baseline, then each knob alone lowered to "
        << to_string(c.run.study_format) << " (the deck's other precision keys do not apply)\n";

  // The baseline: validated and reported like any run; its outputs are written below.
  Trained t = set_up_and_train(base, world, out, err);
  const Verdict verdict = judge(base.validation, t.result);
  RunOutcome o{t.result, t.weights, build_report(base, t, verdict, world), verdict.valid,
               verdict.exit_code()};
  if (root) print_summary(out, o.report);
  const double reference = o.result.final_loss;
  // Every knob at the baseline's step size: eta0: auto is probed once, for the baseline.
  if (base.solver.step_size.eta0_auto) {
    base.solver.step_size.eta0 = t.step_size_auto["eta0"].get<double>();
    base.solver.step_size.eta0_auto = false;
  }

  nlohmann::json rows = nlohmann::json::array();
  if (root) out << "\n  knob            format      final loss        relative gap to fp32\n";
  for (Knob k : all_knobs)
    rows.push_back(lowered_row(base, k, c.run.study_format, reference, world, out, err));
  o.report["study"] = {{"kind", "precision"},
                       {"baseline", {{"preset", "fp32"}, {"final_loss", reference}}},
                       {"lowered_to", to_string(c.run.study_format)},
                       {"rows", rows}};
  write_outputs_collectively(c, o.report, t, world, err);
  return o;
}

}  // namespace minisgd
