// solver.step_size.eta0: auto (solvers/step_probe.hpp) under MPI (run at 1, 2, 3 and 4 ranks):
// the probe tries the same candidates and picks the same η₀ at every rank count, for every
// loss, batch size, decomposition and CA-SGD, so in FP64 the run gives the weights of one rank;
// on data no larger than its sample the probe is the run itself; the report says what it did.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "support/test_support.hpp"

using namespace minisgd;
using test::deck;
using test::run_quiet;

namespace {

// 300 rows: batches of 16 leave a short batch of 12; 9 features + intercept.
std::string auto_deck(const std::string& kind, const std::string& loss, const std::string& method,
                      const std::string& dec, int b, int s = 1) {
  return "run: {seed: 11}\n"
         "data: {source: synthetic, synthetic: {kind: " +
         kind +
         ", rows: 300, features: 9}}\n"
         "model: {loss: " +
         loss +
         ", l2: 1.0e-3, intercept: true}\n"
         "solver: {method: " +
         method + ", decomposition: " + dec + ", batch_size: " + std::to_string(b) +
         ", s: " + std::to_string(s) +
         ", epochs: 3, reshuffle: true, step_size: auto}\n"
         "precision: {preset: fp64}\n";
}

}  // namespace

TEST(StepProbe, SameChoiceAndWeightsAtEveryRankCount) {
  const struct {
    const char *kind, *loss, *method, *dec;
    int b, s;
  } cases[] = {{"synth", "logistic", "sgd", "row", 1, 1},
               {"synth", "logistic", "sgd", "row", 16, 1},
               {"linear-synth", "linear", "sgd", "column", 16, 1},
               {"poisson-synth", "poisson", "sgd", "row", 8, 1},
               {"synth", "logistic", "ca-sgd", "column", 16, 4}};
  for (const auto& k : cases) {
    SCOPED_TRACE(std::string(k.loss) + " " + k.method + " " + k.dec + " b=" + std::to_string(k.b));
    const Config c = deck(auto_deck(k.kind, k.loss, k.method, k.dec, k.b, k.s));
    const RunOutcome all = run_quiet(c, MPI_COMM_WORLD);
    const RunOutcome one = run_quiet(c, MPI_COMM_SELF);
    const auto &pa = all.report["step_size_auto"], &p1 = one.report["step_size_auto"];
    ASSERT_EQ(pa["candidates"].size(), p1["candidates"].size());
    for (std::size_t i = 0; i < pa["candidates"].size(); ++i) {
      EXPECT_EQ(pa["candidates"][i]["eta0"], p1["candidates"][i]["eta0"]);
      const auto &a = pa["candidates"][i]["loss"], &o = p1["candidates"][i]["loss"];
      ASSERT_EQ(a.is_null(), o.is_null());  // null: diverged
      if (!o.is_null()) {
        EXPECT_NEAR(a.get<double>(), o.get<double>(), 1e-12 * std::fabs(o.get<double>()));
      }
    }
    EXPECT_EQ(pa["eta0"], p1["eta0"]);
    EXPECT_LT(test::relative_difference(all.weights, one.weights), 1e-10);
    EXPECT_LT(all.result.final_loss, all.result.initial_loss);
    // The probe's time is set-up time, which the time to target counts.
    EXPECT_GE(all.report["result"]["time_to_target"]["setup_s"].get<double>(),
              pa["seconds"].get<double>());
  }
}

// 300 rows are fewer than the sample holds: each candidate trains the run's own steps (its
// epochs as passes, its batch order, schedule and averaging), so the winner's sample objective
// is the run's final objective. The winner has the least objective of the candidates, which are
// powers of √2, its two √2 neighbours among them.
TEST(StepProbe, OnDataNoLargerThanItsSampleTheProbeIsTheRun) {
  for (const int b : {1, 16}) {
    SCOPED_TRACE(b);
    const RunOutcome o = run_quiet(deck(auto_deck("synth", "logistic", "sgd", "row", b)));
    const auto& p = o.report["step_size_auto"];
    EXPECT_EQ(p["sample_rows"], 300);
    EXPECT_EQ(p["steps"], 3 * (300 / b + (300 % b ? 1 : 0)));
    const double eta0 = p["eta0"];
    double chosen = NAN, least = INFINITY;
    bool below = false, above = false;
    for (const auto& k : p["candidates"]) {
      const double eta = k["eta0"], half_steps = 2 * std::log2(eta);
      EXPECT_NEAR(half_steps, std::round(half_steps), 1e-9) << eta;
      if (k["loss"].is_null()) continue;
      least = std::fmin(least, k["loss"].get<double>());
      if (eta == eta0) chosen = k["loss"];
      below |= std::fabs(eta * std::sqrt(2.0) - eta0) < 1e-12 * eta0;
      above |= std::fabs(eta / std::sqrt(2.0) - eta0) < 1e-12 * eta0;
    }
    EXPECT_EQ(chosen, least);
    EXPECT_TRUE(below && above);
    EXPECT_NEAR(chosen, o.result.final_loss, 1e-13 * chosen);
    EXPECT_EQ(o.report["deck"]["solver"]["step_size"], "auto");
    EXPECT_EQ(o.report["deck"]["solver"]["averaging"], "tail");
  }
}

// How η₀ scales with the batch (docs/input_deck.md, "Which schedule, which averaging"): a step
// of b rows averages b gradients, so its noise falls as 1/b and η₀ can grow about b-fold until
// F's curvature bounds it. On this well-conditioned problem (9 standardized features) the
// probe's η₀ at b = 16 is 4 to 16·√2 times its η₀ at b = 1.
TEST(StepProbe, StepSizeGrowsWithTheBatchAtMostLinearly) {
  const auto eta0 = [](int b) {
    const RunOutcome o = run_quiet(deck(auto_deck("synth", "logistic", "sgd", "row", b)));
    return o.report["step_size_auto"]["eta0"].get<double>();
  };
  const double ratio = eta0(16) / eta0(1);
  EXPECT_GE(ratio, 4.0);
  EXPECT_LE(ratio, 16 * std::sqrt(2.0) * (1 + 1e-12));
}
