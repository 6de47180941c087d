#include "minisgd/app/study.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "minisgd/app/collective.hpp"
#include "minisgd/comm/mpi_communicator.hpp"
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

}  // namespace

RunOutcome run_precision_study(const Config& c, MPI_Comm world_comm, std::ostream& out,
                               std::ostream& err) {
  using namespace precision;
  comm::MpiCommunicator world(world_comm);
  const bool root = world.rank() == 0;

  Config base = c;
  base.run.study = Study::none;
  base.precision.preset = Preset::fp32;
  base.precision.plan = preset_plan(Preset::fp32);
  base.precision.plan.rounding = c.precision.plan.rounding;
  base.output = {};  // written below, with the table
  if (root)
    out << "precision study: the fp32 baseline, then each knob alone lowered to "
        << to_string(c.run.study_format) << " (the deck's other precision keys do not apply)\n";
  RunOutcome o = run(base, world_comm, out, err);
  const double reference = o.result.final_loss;

  nlohmann::json rows = nlohmann::json::array();
  NullStream quiet;
  if (root) out << "\n  knob            format      final loss        relative gap to fp32\n";
  for (Knob k : all_knobs) {
    Config lowered = base;
    lowered.precision.plan[k] = c.run.study_format;
    lowered.validation.reference_loss.reset();
    double loss = std::numeric_limits<double>::quiet_NaN();
    try {
      loss = run(lowered, world_comm, quiet, err).result.final_loss;
    } catch (const Abort& a) {
      if (a.code != kRuntimeFailure) throw;  // diverged: a finding, not a failure
    }
    const double gap = (loss - reference) / std::fabs(reference);
    const bool native = realize(lowered.precision.plan).native[int(k)];
    rows.push_back({{"knob", name(k)},
                    {"format", to_string(c.run.study_format)},
                    {"native", native},
                    {"final_loss", std::isfinite(loss) ? nlohmann::json(loss) : nullptr},
                    {"relative_gap", std::isfinite(gap) ? nlohmann::json(gap) : nullptr}});
    if (root) {
      char line[160];
      std::snprintf(line, sizeof line, "  %-15s %-10s %.10e  %+.3e%s\n", name(k),
                    to_string(c.run.study_format).c_str(), loss, gap,
                    std::isfinite(loss) ? (native ? "" : "  (emulated)") : "  (diverged)");
      out << line << std::flush;
    }
  }
  o.report["study"] = {{"kind", "precision"},
                       {"baseline", {{"preset", "fp32"}, {"final_loss", reference}}},
                       {"lowered_to", to_string(c.run.study_format)},
                       {"rows", rows}};
  if (root) {
    collectively(world, err, [&] { write_outputs(c, o.report, o.result.history, o.weights); });
  } else {
    collectively(world, err, [] {});
  }
  return o;
}

}  // namespace minisgd
