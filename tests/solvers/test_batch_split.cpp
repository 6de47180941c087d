// Batches that do not split evenly over the ranks (run at 1, 2, 3 and 4 ranks): a batch of 64
// on 3 ranks (22, 21, 21 rows in the row decomposition) gives, in FP64, the weights of one
// rank, for SGD in both decompositions and for CA-SGD, and a batch smaller than P runs too.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "support/test_support.hpp"

using namespace minisgd;
using test::deck;
using test::run_quiet;

namespace {

// 1000 rows: 15 batches of 64 and a short batch of the 40 rows after them (16 steps an epoch,
// the short one dealt over the ranks like the rest); 13 features + intercept, so the column
// decomposition splits the columns unevenly too.
std::string split_deck(const std::string& method, const std::string& dec, int b, int s) {
  return "run: {seed: 3}\n"
         "data: {source: synthetic, synthetic: {kind: synth, rows: 1000, features: 13}}\n"
         "model: {loss: logistic, l2: 1.0e-3, intercept: true}\n"
         "solver: {method: " +
         method + ", decomposition: " + dec + ", batch_size: " + std::to_string(b) +
         ", s: " + std::to_string(s) +
         ", epochs: 3, reshuffle: true,\n"
         "         step_size: {eta0: 0.2, schedule: inverse_time, decay: 0.01}}\n"
         "precision: {preset: fp64}\n";
}

}  // namespace

TEST(BatchSplit, Batch64WeightsEqualOneRankInBothDecompositionsAndForCaSgd) {
  const struct {
    const char* method;
    const char* dec;
    int s;
  } runs[] = {{"sgd", "row", 1}, {"sgd", "column", 1}, {"ca-sgd", "column", 4}};
  double worst = 0;
  for (const auto& r : runs) {
    SCOPED_TRACE(std::string(r.method) + " " + r.dec);
    const Config c = deck(split_deck(r.method, r.dec, 64, r.s));
    const RunOutcome all = run_quiet(c, MPI_COMM_WORLD);
    const RunOutcome one = run_quiet(c, MPI_COMM_SELF);
    EXPECT_EQ(all.result.iterations, 48);
    const double d = test::relative_difference(all.weights, one.weights);
    EXPECT_LT(d, 1e-12);
    worst = std::fmax(worst, d);
    EXPECT_LT(all.result.final_loss, 0.9 * all.result.initial_loss);
  }
  if (test::world_rank() == 0)
    std::printf("[ measured ] max relative weight difference P=%d vs P=1, batch 64: %.3e\n",
                test::world_size(), worst);
}

// CA-SGD reorganizes SGD exactly also when the batch does not divide over the ranks.
TEST(BatchSplit, Batch64CaSgdEqualsSgd) {
  const RunOutcome sgd = run_quiet(deck(split_deck("sgd", "row", 64, 1)));
  const RunOutcome ca = run_quiet(deck(split_deck("ca-sgd", "column", 64, 4)));
  EXPECT_LT(test::relative_difference(ca.weights, sgd.weights), 1e-12);
}

// b < P: some ranks hold no row of a batch and contribute a zero gradient.
TEST(BatchSplit, BatchSmallerThanRankCount) {
  const Config c = deck(split_deck("sgd", "row", 3, 1), {"solver.epochs=0.5"});
  const RunOutcome all = run_quiet(c, MPI_COMM_WORLD);
  const RunOutcome one = run_quiet(c, MPI_COMM_SELF);
  EXPECT_LT(test::relative_difference(all.weights, one.weights), 1e-12);
}

// The same through the file reader (rows routed to their owners): heart_scale, 270 rows,
// 4 batches of 64 and a short batch of the 14 rows after them.
TEST(BatchSplit, Batch64FromALibsvmFileEqualsOneRank) {
  for (const char* dec : {"row", "column"}) {
    const Config c = deck(std::string("data: {source: libsvm, path: ") + MINISGD_HEART_SCALE +
                          ", cache: false}\n"
                          "model: {loss: logistic, l2: 1.0e-3, intercept: true}\n"
                          "solver: {decomposition: " +
                          dec +
                          ", batch_size: 64, epochs: 4, reshuffle: true, step_size: 0.5}\n"
                          "precision: {preset: fp64}\n"
                          "output: {warmup_steps: 0}\n");
    const RunOutcome all = run_quiet(c, MPI_COMM_WORLD);
    const RunOutcome one = run_quiet(c, MPI_COMM_SELF);
    EXPECT_LT(test::relative_difference(all.weights, one.weights), 1e-12) << dec;
    EXPECT_LT(all.result.final_loss, all.result.initial_loss) << dec;
    // Every row once an epoch: the FOM counts 4 x 270 samples in 4 x 5 steps.
    EXPECT_EQ(all.report["result"]["fom_iterations"], 20) << dec;
    EXPECT_EQ(all.report["result"]["fom_samples"], 4 * 270) << dec;
  }
}
