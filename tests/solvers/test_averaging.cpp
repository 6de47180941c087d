// Iterate averaging and the 1/(λ(t + t0)) schedule (run at 1, 2, 3 and 4 ranks): the reported
// weights and objective are the running mean of the iterates, equal to an independent serial
// computation; FP64 CA-SGD with averaging equals FP64 SGD with averaging for every s, also
// when averaging starts inside an outer step; the deck refuses what makes no sense.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "minisgd/data/raw_data.hpp"
#include "support/logistic_objective.hpp"
#include "support/test_support.hpp"

using namespace minisgd;
using test::deck;
using test::run_quiet;

namespace {

// 200 rows, batch 8: 25 steps an epoch, 3 epochs = 75 steps (not a multiple of any s below).
std::string avg_deck(const std::string& method, int s, const std::string& averaging) {
  return "run: {seed: 9}\n"
         "data: {source: synthetic, synthetic: {kind: synth, rows: 200, features: 11}}\n"
         "model: {loss: logistic, l2: 1.0e-2, intercept: true}\n"
         "solver: {method: " +
         method + ", decomposition: column, batch_size: 8, s: " + std::to_string(s) +
         ", epochs: 3, reshuffle: true, averaging: " + averaging +
         ",\n"
         "         step_size: {schedule: optimal, eta0: 0.5}}\n"
         "precision: {preset: fp64}\n";
}

}  // namespace

TEST(Averaging, Fp64CaSgdWithAveragingEqualsSgdWithAveraging) {
  const std::vector<std::string> kinds = {"polyak",
                                          "tail",
                                          "polyak, averaging_start: 1.3",
                                          "tail, averaging_start: 0.5",
                                          "polyak, averaging_gamma: 3",
                                          "tail, averaging_start: 1.3, averaging_gamma: 0.5"};
  for (const std::string& a : kinds) {
    const RunOutcome sgd = run_quiet(deck(avg_deck("sgd", 1, a)));
    const RunOutcome plain = run_quiet(deck(avg_deck("sgd", 1, "none")));
    // The average is what is reported, and it is not the last iterate.
    EXPECT_GT(test::relative_difference(sgd.weights, plain.weights), 1e-3) << a;
    for (int s : {1, 3, 8}) {
      SCOPED_TRACE(a + " s=" + std::to_string(s));
      const RunOutcome ca = run_quiet(deck(avg_deck("ca-sgd", s, a)));
      EXPECT_LT(test::relative_difference(ca.weights, sgd.weights), 1e-12);
      EXPECT_NEAR(ca.result.final_loss, sgd.result.final_loss, 1e-12 * sgd.result.final_loss);
    }
  }
}

TEST(Averaging, AveragedWeightsDoNotDependOnRankCount) {
  for (const char* dec : {"row", "column"}) {
    const Config c = deck(avg_deck("sgd", 1, "polyak"),
                          {std::string("solver.decomposition=") + dec, "solver.batch_size=7"});
    const RunOutcome all = run_quiet(c, MPI_COMM_WORLD), one = run_quiet(c, MPI_COMM_SELF);
    EXPECT_LT(test::relative_difference(all.weights, one.weights), 1e-12) << dec;
  }
}

// An independent serial SGD on heart_scale in file order with η_t = 1/(λ(t + t0)),
// t0 = 1/(λη₀), and the mean of the iterates after steps start..T−1 (plain, or with the
// polynomial-decay weights (γ + 1)/(k + γ)): the weights written and the final objective
// reported are those of the mean.
TEST(Averaging, MatchesIndependentSerialMeanOfIterates) {
  const RawData d = read_libsvm(MINISGD_HEART_SCALE, 0);
  const std::int64_t b = 10, nb = d.rows / b, epochs = 3;
  const double l2 = 1e-2, eta0 = 0.3, t0 = 1 / (l2 * eta0);
  const struct {
    const char* averaging;
    std::int64_t start;
    double gamma;
  } cases[] = {{"polyak", 0, 0.0},
               {"polyak, averaging_start: 1.5", std::int64_t(std::ceil(1.5 * double(nb))), 0.0},
               {"tail", epochs * nb / 2, 0.0},
               {"polyak, averaging_gamma: 3", 0, 3.0},
               {"tail, averaging_gamma: 1.5", epochs * nb / 2, 1.5}};
  for (const auto& [averaging, start, gamma] : cases) {
    std::vector<double> w(d.cols, 0.0), mean(d.cols, 0.0);
    for (std::int64_t t = 0; t < epochs * nb; ++t) {
      const double eta = 1 / (l2 * (double(t) + t0));
      std::vector<double> g(d.cols, 0.0);
      for (std::int64_t r = (t % nb) * b; r < (t % nb + 1) * b; ++r) {
        double z = 0;
        for (auto k = d.row_ptr[r]; k < d.row_ptr[r + 1]; ++k) z += d.val[k] * w[d.col[k]];
        const double u = -d.labels[r] / (1 + std::exp(d.labels[r] * z));
        for (auto k = d.row_ptr[r]; k < d.row_ptr[r + 1]; ++k) g[d.col[k]] += u * d.val[k];
      }
      for (std::int64_t j = 0; j < d.cols; ++j) w[j] = (1 - eta * l2) * w[j] - eta / b * g[j];
      if (t >= start)
        for (std::int64_t j = 0; j < d.cols; ++j)
          mean[j] += (w[j] - mean[j]) * (gamma + 1) / (double(t - start + 1) + gamma);
    }
    const double objective = test::logistic_objective(d, mean, l2);
    for (const char* dec : {"row", "column"}) {
      SCOPED_TRACE(std::string(averaging) + " " + dec);
      const RunOutcome o =
          run_quiet(deck(std::string("data: {source: libsvm, path: ") + MINISGD_HEART_SCALE +
                         ", shuffle: false, cache: false}\n"
                         "model: {loss: logistic, l2: 1.0e-2}\n"
                         "solver: {decomposition: " +
                         dec + ", batch_size: 10, epochs: 3, averaging: " + averaging +
                         ",\n  step_size: {schedule: optimal, eta0: 0.3}}\n"
                         "precision: {preset: fp64}\n"));
      EXPECT_LT(test::relative_difference(o.weights, mean), 1e-12);
      EXPECT_NEAR(o.result.final_loss, objective, 1e-12 * objective);
    }
  }
}

TEST(Averaging, OptimalScheduleDefaultsToScikitLearnsFirstStep) {
  const Config c = deck("model: {l2: 1.0e-4}\nsolver: {step_size: {schedule: optimal}}\n");
  EXPECT_DOUBLE_EQ(c.solver.step_size.eta0, 10.0);  // λ^(−1/4)
}

TEST(Averaging, DeckRefusesWhatMakesNoSense) {
  EXPECT_TRUE(test::refused("solver: {averaging: mean}\n",
                            "solver.averaging: 'mean' is not one "
                            "of none | polyak | tail"));
  EXPECT_TRUE(test::refused("solver: {averaging_start: 1}\n", "solver.averaging_start"));
  EXPECT_TRUE(test::refused("solver: {averaging_gamma: 3}\n", "solver.averaging_gamma: applies"));
  EXPECT_TRUE(test::refused("solver: {averaging: polyak, averaging_gamma: -1}\n",
                            "solver.averaging_gamma"));
  EXPECT_TRUE(
      test::refused("solver: {step_size: {schedule: optimal}}\n",
                    "solver.step_size.schedule: optimal is 1/(λ(t + t0)): it needs model.l2 > 0"));
  EXPECT_TRUE(
      test::refused("model: {l2: 0.1}\nsolver: {step_size: {schedule: optimal, decay: 1}}\n",
                    "solver.step_size.decay"));
  EXPECT_TRUE(
      test::refused("solver: {averaging: tail, epochs: 0, max_iters: 10}\n", "solver.averaging"));
}
