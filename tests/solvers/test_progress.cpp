// The progress line's rate and ETA (solvers/trainer.hpp).
#include <gtest/gtest.h>

#include <string>

#include "minisgd/solvers/trainer.hpp"

namespace minisgd {
namespace {

HistoryRow row(std::int64_t iteration) { return {iteration, iteration / 100.0, 0.5, 0.0, 2.0}; }

TEST(Progress, FirstEvaluationHasNoRate) {
  const std::string line = progress_line(row(0), 400, 0.0, -1);
  EXPECT_NE(line.find("iter          0"), std::string::npos) << line;
  EXPECT_EQ(line.find("rate"), std::string::npos) << line;
  EXPECT_EQ(line.find("eta"), std::string::npos) << line;
}

TEST(Progress, RateAndTimeLeftFromTheStepsDone) {
  // 100 of 4000 steps in 10 s: 10 steps/s, 3900 steps left = 390 s = 0:06:30.
  const std::string line = progress_line(row(100), 4000, 10.0, -1);
  EXPECT_NE(line.find("  rate 1.000e+01 steps/s  eta 0:06:30"), std::string::npos) << line;
  // 10 h 0 min 1 s left.
  EXPECT_NE(progress_line(row(1), 36002, 1.0, -1).find("eta 10:00:01"), std::string::npos);
}

TEST(Progress, TimeLimitCapsTheEta) {
  EXPECT_NE(progress_line(row(100), 4000, 10.0, 42.4).find("eta 0:00:42"), std::string::npos);
  EXPECT_NE(progress_line(row(100), 4000, 10.0, 1e6).find("eta 0:06:30"), std::string::npos);
}

TEST(Progress, NothingLeftAtTheLastStep) {
  EXPECT_NE(progress_line(row(4000), 4000, 3.0, -1).find("eta 0:00:00"), std::string::npos);
}

}  // namespace
}  // namespace minisgd
