// The runs of random bits the dithering kernels draw (precision::sr_bits_run) against sr_bits
// one index at a time: every bit, for runs of 16 and 32 consecutive indices, over random seeds,
// steps and first indices, runs whose low word wraps past 2^32 (the carry into the counter's
// high word), and the extremes. tests/CMakeLists.txt also builds this file for AVX-512
// (test_random_bits_avx512) where the build machine has it, so the portable build tests the
// sixteen-lane Philox too.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "minisgd/precision/bit_rounding.hpp"

using minisgd::precision::sr_bits;
using minisgd::precision::sr_bits_run;

namespace {

template <int N>
int mismatches(std::uint64_t seed, std::uint64_t step, std::uint64_t first) {
  std::uint32_t r[N];
  sr_bits_run<N>(seed, step, first, r);
  int bad = 0;
  for (int j = 0; j < N; ++j) bad += r[j] != sr_bits(seed, step, first + std::uint64_t(j));
  return bad;
}

TEST(RandomBits, RunsMatchOneIndexAtATime) {
  std::mt19937_64 gen(20261129);
  for (int t = 0; t < 20000; ++t) {
    const std::uint64_t seed = gen(), step = gen();
    std::uint64_t first = gen();
    if (t % 3 == 1) first = (gen() << 32) | (0xFFFFFFFFu - gen() % 40);  // wraps inside the run
    if (t % 3 == 2) first = gen() % 4096;                                // small, as in a deck
    ASSERT_EQ(mismatches<16>(seed, step, first), 0) << seed << " " << step << " " << first;
    ASSERT_EQ(mismatches<32>(seed, step, first), 0) << seed << " " << step << " " << first;
    ASSERT_EQ(mismatches<5>(seed, step, first), 0) << seed << " " << step << " " << first;
  }
  for (const std::uint64_t edge :
       {std::uint64_t(0), ~std::uint64_t(0), std::uint64_t(0xFFFFFFF0), ~std::uint64_t(0) - 15})
    EXPECT_EQ(mismatches<16>(edge, edge, edge), 0) << edge;
}

}  // namespace
