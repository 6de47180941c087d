#include "minisgd/app/run.hpp"

#include "minisgd/app/collective.hpp"
#include "minisgd/app/run_report.hpp"
#include "minisgd/app/study.hpp"
#include "minisgd/app/train_run.hpp"
#include "minisgd/app/verdict.hpp"
#include "minisgd/config/deck.hpp"
#include "minisgd/core/atomic_file.hpp"
#include "minisgd/core/kokkos.hpp"
#include "minisgd/report/output_files.hpp"
#include "minisgd/version.hpp"

namespace minisgd {

namespace {

/// Set up and train, verdict, report, outputs.
RunOutcome run_single(const Config& c, comm::MpiCommunicator& world, std::ostream& out,
                      std::ostream& err) {
  RunOutcome o;
  Trained t = set_up_and_train(c, world, out, err);
  const Verdict verdict = judge(c.validation, t.result);
  o.valid = verdict.valid;
  o.exit_code = t.result.stop_reason == "time_limit" ? int(kTimeLimit) : verdict.exit_code();
  o.report = build_report(c, t, verdict, world);
  if (world.rank() == 0) print_summary(out, o.report);
  write_outputs_collectively(c, o.report, t, world, err);
  o.result = std::move(t.result);
  o.weights = std::move(t.weights);
  return o;
}

}  // namespace

RunOutcome run(const Config& c, comm::MpiCommunicator& world, std::ostream& out,
               std::ostream& err) {
  if (world.rank() == 0)
    out << "minisgd " << MINISGD_VERSION << " (" << MINISGD_GIT_HASH << "), Kokkos "
        << ExecSpace::name() << ", " << world.size() << " MPI rank(s), deck " << c.deck_path
        << std::endl;
  // Outputs that cannot be written are found now, not after an hour of training.
  collectively(world, err, [&] {
    if (world.rank() != 0) return;
    const std::pair<const char*, const std::string*> outputs[] = {
        {"output.report", &c.output.report},
        {"output.history", &c.output.history},
        {"output.weights", &c.output.weights},
        {"output.checkpoint.path", &c.output.checkpoint.path}};
    for (const auto& [key, path] : outputs)
      if (!path->empty())
        if (const std::string why = output_path_problem(*path); !why.empty()) fail_key(c, key, why);
  });
  if (c.run.study == Study::precision) return run_precision_study(c, world, out, err);
  return run_single(c, world, out, err);
}

}  // namespace minisgd
