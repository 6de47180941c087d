// Deck keys of compression and of the optimizers, and what the optimizers compute.
#include <gtest/gtest.h>

#include <cmath>

#include "minisgd/core/errors.hpp"
#include "support/test_support.hpp"

using namespace minisgd;
using test::deck;

namespace {

const char* kProblem =
    "run: {seed: 3}\n"
    "data: {source: synthetic, synthetic: {kind: synth, rows: 96, features: 12}}\n"
    "model: {loss: logistic, l2: 1.0e-2}\n"
    "solver: {batch_size: 12, epochs: 2, step_size: 0.05}\n"
    "precision: {preset: fp64}\n";

}  // namespace

TEST(CompressionDeck, ReadsEveryMethodsParameters) {
  const Config c = deck(
      "compression:\n"
      "  method: loco\n"
      "  aps: {format: e4m3, block_size: 64, kahan: true}\n"
      "  global-qsgd: {bits: 8, dithering: exponential}\n"
      "  gtopk: {density: 0.001}\n"
      "  loco: {bits: 4, beta: 0.5, reset_period: 16, group_size: 32}\n");
  EXPECT_EQ(c.compression.method, CompressionMethod::loco);
  EXPECT_EQ(c.compression.aps.format, "e4m3");
  EXPECT_EQ(c.compression.aps.block_size, 64);
  EXPECT_TRUE(c.compression.aps.kahan);
  EXPECT_EQ(c.compression.global_qsgd.dithering, Dithering::exponential);
  EXPECT_DOUBLE_EQ(c.compression.gtopk.density, 0.001);
  EXPECT_DOUBLE_EQ(c.compression.loco.beta, 0.5);
  EXPECT_EQ(c.compression.loco.group_size, 32);
  EXPECT_EQ((*c.resolved)["compression"]["qsgd"]["bits"], 8);  // defaults of the others too
}

TEST(CompressionDeck, ErrorsNameTheKey) {
  EXPECT_TRUE(test::refused("solver: {decomposition: column}\ncompression: {method: aps}",
                            "compression.method"));
  EXPECT_TRUE(test::refused("compression: {aps: {format: fp32}}", "compression.aps.format"));
  EXPECT_TRUE(test::refused("compression: {qsgd: {bits: 4, dithering: exponential}}",
                            "compression.qsgd.bits"));
  EXPECT_TRUE(test::refused("compression: {topk: {density: 0}}", "compression.topk.density"));
  EXPECT_TRUE(
      test::refused("compression: {loco: {group_size: 33}}", "compression.loco.group_size"));
  EXPECT_TRUE(test::refused("compression: {method: zip}", "compression.method"));
  EXPECT_TRUE(test::refused("solver: {adam: {beta2: 1.0}}", "solver.adam.beta2"));
  EXPECT_TRUE(test::refused("solver: {method: ca-sgd, decomposition: column, optimizer: adam}",
                            "solver.optimizer"));
}

// Momentum with μ = 0 is SGD: w − η(g/b + λw) = (1 − ηλ)w − (η/b)g, to rounding in FP64.
TEST(Optimizer, MomentumWithoutMomentumIsSgd) {
  const RunOutcome sgd = test::run_quiet(deck(kProblem), MPI_COMM_SELF);
  const RunOutcome heavy = test::run_quiet(
      deck(kProblem, {"solver.optimizer=momentum", "solver.momentum=0"}), MPI_COMM_SELF);
  EXPECT_LT(test::relative_difference(heavy.weights, sgd.weights), 1e-12);
  const RunOutcome with = test::run_quiet(
      deck(kProblem, {"solver.optimizer=momentum", "solver.momentum=0.9"}), MPI_COMM_SELF);
  EXPECT_GT(test::relative_difference(with.weights, sgd.weights), 1e-3);
}

// Adam's first step from w = 0 moves every coordinate with a clear gradient by η·sign:
// the bias corrections make m̂ = G and v̂ = G², so the step is ηG/(|G| + ε).
TEST(Optimizer, AdamFirstStepIsEtaTimesSign) {
  const RunOutcome o = test::run_quiet(
      deck(kProblem, {"solver.optimizer=adam", "solver.max_iters=1", "solver.epochs=0"}),
      MPI_COMM_SELF);
  ASSERT_EQ(o.result.iterations, 1);
  for (const double w : o.weights) EXPECT_NEAR(std::fabs(w), 0.05, 0.05 * 1e-5);
}
