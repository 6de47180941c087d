// Time to target (docs/output.md): the rule on a hand-made history, and end to end under MPI
// (run at 1, 2, 3 and 4 ranks) the report's and the FOM line's fields.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <sstream>

#include "minisgd/report/output_files.hpp"
#include "minisgd/report/time_to_target.hpp"
#include "support/test_support.hpp"

using namespace minisgd;
using test::deck;
using test::run_quiet;

namespace {

const std::vector<HistoryRow> kHistory = {{0, 0.0, 1.0, NAN, 0.0},
                                          {10, 0.5, 0.6, NAN, 1.0},
                                          {20, 1.0, 0.5, NAN, 2.0},
                                          {30, 1.5, 0.4, NAN, 3.0},
                                          {40, 2.0, 0.45, NAN, 4.0}};

const char* kDeck =
    "run: {seed: 5}\n"
    "data: {source: synthetic, synthetic: {kind: synth, rows: 240, features: 10}}\n"
    "model: {loss: logistic, l2: 1.0e-3}\n"
    "solver: {decomposition: row, batch_size: 12, epochs: 3, eval_every: 4,\n"
    "         step_size: {eta0: 0.05, schedule: constant}}\n"
    "precision: {preset: fp32}\n";

std::string fom_line(const RunOutcome& o) {
  std::ostringstream out;
  print_summary(out, o.report);
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);)
    if (line.rfind("FOM: ", 0) == 0) return line;
  return "";
}

}  // namespace

TEST(TimeToTarget, FirstEvaluationAtOrBelowTheUpperEdgeOfTheValidBand) {
  // 0.5 + 0.1·0.5 = 0.55: first met at iteration 20 (0.5), not at 10 (0.6).
  const TimeToTarget t = time_to_target(kHistory, 0.5, 0.1, 0.25);
  ASSERT_TRUE(t.iteration.has_value());
  EXPECT_DOUBLE_EQ(*t.target, 0.55);
  EXPECT_EQ(*t.iteration, 20);
  EXPECT_EQ(t.epoch, 1.0);
  EXPECT_EQ(t.local_seconds, 2.25);  // set-up included
}

TEST(TimeToTarget, NegativeReferenceWidensUpwards) {
  std::vector<HistoryRow> h = kHistory;
  for (auto& r : h) r.loss -= 1.0;  // 0, −0.4, −0.5, −0.6, −0.55
  const TimeToTarget t = time_to_target(h, -0.5, 0.1, 0.0);
  EXPECT_DOUBLE_EQ(*t.target, -0.45);
  EXPECT_EQ(*t.iteration, 20);
}

TEST(TimeToTarget, UnreachedTargetAndMissingReferenceSaySo) {
  const TimeToTarget low = time_to_target(kHistory, 0.3, 0.01, 1.0);
  EXPECT_FALSE(low.iteration.has_value());
  EXPECT_NE(low.why_not.find("not reached: lowest evaluated loss 0.4 > target 0.303"),
            std::string::npos)
      << low.why_not;
  const TimeToTarget none = time_to_target(kHistory, std::nullopt, 0.01, 1.0);
  EXPECT_FALSE(none.target.has_value());
  EXPECT_EQ(none.why_not, "no validation.reference_loss");
}

// The reference is the loss of the evaluation in the middle of the run: the report names that
// evaluation (or an earlier one within tolerance), and its time lies within the training time.
TEST(TimeToTarget, ReportAndFomLineOfARun) {
  const RunOutcome plain = run_quiet(deck(kDeck));
  const auto& h = plain.result.history;
  ASSERT_GE(h.size(), 5u);
  const HistoryRow mid = h[h.size() / 2];
  char ref[64];
  std::snprintf(ref, sizeof ref, "validation.reference_loss=%.17g", mid.loss);
  const RunOutcome o = run_quiet(deck(kDeck, {ref, "validation.tolerance=0"}));
  const auto& t = o.report["result"]["time_to_target"];
  ASSERT_TRUE(t["reached"].get<bool>()) << t.dump();
  const std::int64_t it = t["iteration"].get<std::int64_t>();
  EXPECT_LE(it, mid.iteration);
  EXPECT_EQ(it % 4, 0);  // an evaluation point
  for (const HistoryRow& r : o.result.history) {
    if (r.iteration < it) {
      EXPECT_GT(r.loss, t["target_loss"].get<double>());
    }
  }
  const double seconds = t["seconds"].get<double>(), setup = t["setup_s"].get<double>();
  EXPECT_GE(seconds, 0.0);
  EXPECT_LE(seconds, setup + o.report["result"]["train_time_s"].get<double>());
  EXPECT_EQ(o.report["fom"]["time_to_target_s"].get<double>(), seconds);
  EXPECT_NE(fom_line(o).find(", time to target "), std::string::npos) << fom_line(o);
  EXPECT_TRUE(t["why_not"].is_null());
}

TEST(TimeToTarget, ARunThatNeverReachesTheTargetSaysSo) {
  const RunOutcome o =
      run_quiet(deck(kDeck, {"validation.reference_loss=0.01", "validation.tolerance=0.1"}));
  const auto& t = o.report["result"]["time_to_target"];
  EXPECT_FALSE(t["reached"].get<bool>());
  EXPECT_TRUE(t["seconds"].is_null());
  EXPECT_TRUE(o.report["fom"]["time_to_target_s"].is_null());
  EXPECT_NE(fom_line(o).find("time to target: not reached: lowest evaluated loss"),
            std::string::npos)
      << fom_line(o);
  EXPECT_EQ(o.exit_code, kInvalid);
}
