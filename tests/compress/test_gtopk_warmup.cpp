// gTop-k's density warm-up (run at 1, 2, 3 and 4 ranks): the schedule itself, and gTop-k at
// its default parameters on a synthetic problem with 4 096 features ending within 2% of dense
// SGD at the same P after 3 epochs (without the warm-up it ended 16% above at P = 3 and 4).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "minisgd/compress/gtopk.hpp"
#include "support/test_support.hpp"

using namespace minisgd;

TEST(GTopKWarmup, DensityFallsGeometricallyToTheConfiguredOne) {
  GTopKParams p;  // defaults: 0.25 in epoch 0, 0.01 from epoch 4
  EXPECT_DOUBLE_EQ(compress::gtopk_density(p, 0), 0.25);
  EXPECT_NEAR(compress::gtopk_density(p, 1), 0.25 * std::pow(0.04, 0.25), 1e-15);
  EXPECT_NEAR(compress::gtopk_density(p, 2), 0.05, 1e-15);
  EXPECT_GT(compress::gtopk_density(p, 3), 0.01);
  for (std::int64_t e : {4, 5, 100}) EXPECT_DOUBLE_EQ(compress::gtopk_density(p, e), 0.01);
  p.warmup_epochs = 0;
  EXPECT_DOUBLE_EQ(compress::gtopk_density(p, 0), 0.01);
  p.warmup_epochs = 4;
  p.density = 0.5;  // a warm-up density below the configured one is no warm-up
  EXPECT_DOUBLE_EQ(compress::gtopk_density(p, 0), 0.5);
}

TEST(GTopKWarmup, DefaultsEndWithinTwoPercentOfDense) {
  const std::string yaml =
      "run: {seed: 4}\n"
      "data: {source: synthetic, synthetic: {kind: epsilon-like, rows: 3072, features: 4096}}\n"
      "model: {loss: logistic, l2: 1.0e-4}\n"
      "solver: {batch_size: 64, epochs: 3, step_size: {eta0: 16, schedule: inverse_time, "
      "decay: 0.01}}\n"
      "compression: {method: gtopk}\n";
  const RunOutcome gtopk = test::run_quiet(test::deck(yaml));
  const RunOutcome dense = test::run_quiet(test::deck(yaml, {"compression.method=none"}));
  const double gap = gtopk.result.final_loss / dense.result.final_loss - 1;
  if (test::world_rank() == 0)
    std::printf("[ measured ] P=%d gtopk %.6f dense %.6f gap %+.3f%%\n", test::world_size(),
                gtopk.result.final_loss, dense.result.final_loss, 100 * gap);
  EXPECT_LT(std::fabs(gap), 0.02);
  EXPECT_LT(dense.result.final_loss, 0.9 * dense.result.initial_loss);
}
