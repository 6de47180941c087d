// The dithering's block of sixteen levels (compress::levels_of_block<16>, AVX-512F where the
// build has it) against stochastic_level one value at a time: every code, for float and double
// gradients and 1-, 2- and 4-byte codes, over random values and random bits, and the edges: ±0,
// the levels' bounds and one ulp beyond, values that round across them, NaN and ±∞, and random
// bits at 0 and 2^32 − 1. tests/CMakeLists.txt also builds this file for AVX-512
// (test_dither_levels_avx512) where the build machine has it, so the portable build tests the
// vector form too.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "minisgd/compress/dithering.hpp"

using namespace minisgd::compress;

namespace {

template <class T, class Code>
void check(int levels, double factor) {
  std::mt19937_64 gen(levels * 7 + int(factor));
  std::uniform_real_distribution<double> within(-1.0, 1.0);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const double L = levels / factor;  // the value that lands on the top level
  std::vector<double> edges = {0.0,
                               -0.0,
                               L,
                               -L,
                               std::nextafter(L, inf),
                               std::nextafter(-L, -inf),
                               std::nextafter(L, 0.0),
                               0.5 / factor,
                               -0.5 / factor,
                               nan,
                               inf,
                               -inf,
                               1e-300,
                               -1e-300};
  for (int round = 0; round < 4000; ++round) {
    T x[16];
    std::uint32_t r[16];
    for (int j = 0; j < 16; ++j) {
      const bool edge = gen() % 4 == 0;
      x[j] = T(edge ? edges[gen() % edges.size()] : within(gen) * L);
      const std::uint64_t pick = gen() % 8;
      r[j] = pick == 0 ? 0u : pick == 1 ? ~0u : std::uint32_t(gen());
    }
    Code block[16];
    levels_of_block<16>(x, factor, levels, r, block);
    for (int j = 0; j < 16; ++j)
      ASSERT_EQ(block[j], Code(stochastic_level(double(x[j]) * factor, levels, r[j])))
          << "x = " << double(x[j]) << ", r = " << r[j] << ", levels " << levels;
  }
}

TEST(DitherLevels, ABlockGivesEachValuesLevel) {
  check<float, std::int8_t>(127, 127.0 / 3.5);
  check<double, std::int8_t>(63, 63.0 / 0.25);
  check<float, std::int16_t>(2047, 2047.0 / 10.0);
  check<double, std::int16_t>(32767, 32767.0);
  check<float, std::int32_t>(1 << 20, double(1 << 20) / 7.0);
  check<double, std::int32_t>(3, 3.0);
}

}  // namespace
