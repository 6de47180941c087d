// CA-SGD reproducibility and stochastic rounding (run at 1, 2, 3 and 4 ranks): the same deck
// twice gives bitwise-identical weights (stochastic rounding included: its bits are keyed, not
// drawn from a stream), and the rounding a rank applies to its partial sums is unbiased.
#include <gtest/gtest.h>

#include <cmath>

#include "minisgd/precision/plan.hpp"
#include "support/test_support.hpp"

using namespace minisgd;

namespace {

const char* kDeck =
    "run: {seed: 5}\n"
    "data: {source: synthetic, synthetic: {kind: synth, rows: 256, features: 24}}\n"
    "model: {loss: logistic, l2: 1.0e-3}\n"
    "solver: {method: ca-sgd, batch_size: 8, s: 8, epochs: 2, step_size: 0.5}\n"
    "precision: {preset: mixed, rounding: stochastic}\n";

}  // namespace

TEST(CaSgdRepro, SameDeckTwiceGivesTheSameWeights) {
  for (const char* preset : {"mixed", "mixed-wire-bf16", "fp32"}) {
    const Config c = test::deck(kDeck, {std::string("precision.preset=") + preset});
    const RunOutcome a = test::run_quiet(c), b = test::run_quiet(c);
    ASSERT_FALSE(a.weights.empty());
    EXPECT_EQ(a.weights, b.weights) << preset;  // bitwise: == on doubles, no tolerance
  }
}

// The margin-wire rounder of a rank, built as the CA-SGD stepper builds it (its own seed per
// rank): over N indices the mean of bf16(x) − x is within 6σ of 0, σ = step/(2√N) at most,
// for values placed anywhere between two bf16 neighbours.
TEST(CaSgdRepro, StochasticRoundingIsUnbiased) {
  const precision::Plan plan = test::deck(kDeck).precision.plan;
  const auto r = precision::rounder(plan, precision::Knob::margin_wire, precision::Format::fp32,
                                    precision::rank_seed(5, test::world_rank()));
  ASSERT_TRUE(r.stochastic);
  const int N = 40000;
  for (const double frac : {0.1, 0.25, 0.5, 0.9}) {
    const double step = 0x1p-7, x = 1.0 + 37 * step + frac * step;  // bf16 step in [1, 2)
    double mean = 0;
    for (int i = 0; i < N; ++i) mean += (r(float(x), 9, i) - x) / N;
    EXPECT_NEAR(mean, 0.0, 6 * step / (2 * std::sqrt(double(N)))) << "fraction " << frac;
    EXPECT_NE(r(float(x), 9, 0), float(x));  // x is not on the grid: it is rounded
  }
}
