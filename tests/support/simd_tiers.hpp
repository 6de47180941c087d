#pragma once
// The host vector tiers (core/simd/tier.hpp) as GoogleTest parameters: every tier compiled in
// that this CPU runs. A TEST_P of a suite derived from EachTier runs once per tier, with the
// host kernels switched to it for the test's duration.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "minisgd/core/simd/tier.hpp"

namespace minisgd::simd {
/// A tier as GoogleTest prints it (found by argument-dependent lookup).
inline void PrintTo(Tier t, std::ostream* out) { *out << name(t); }
}  // namespace minisgd::simd

namespace minisgd::testing_support {

inline std::vector<simd::Tier> runnable_tiers() {
  std::vector<simd::Tier> tiers;
  for (simd::Tier t : {simd::Tier::generic, simd::Tier::avx2, simd::Tier::avx512})
    if (simd::compiled(t) && simd::cpu_runs(t)) tiers.push_back(t);
  return tiers;
}

inline std::string tier_name(const ::testing::TestParamInfo<simd::Tier>& info) {
  return simd::name(info.param);
}

class EachTier : public ::testing::TestWithParam<simd::Tier> {
 protected:
  void SetUp() override { ASSERT_TRUE(simd::use_tier(GetParam())) << simd::name(GetParam()); }
  void TearDown() override { simd::use_tier(simd::best_tier()); }
};

}  // namespace minisgd::testing_support

/// Runs the TEST_Ps of `suite` (derived from EachTier) once per runnable tier.
#define MINISGD_FOR_EACH_TIER(suite)                                                        \
  INSTANTIATE_TEST_SUITE_P(Tiers, suite,                                                    \
                           ::testing::ValuesIn(minisgd::testing_support::runnable_tiers()), \
                           minisgd::testing_support::tier_name)
