// ordered_sum's order is its contract (core/ordered_sum.hpp): blocks of 1024 terms, each summed
// left to right, then the block sums left to right, whatever the backend and its threads. Terms
// of very different magnitudes make every other order give other bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "minisgd/core/ordered_sum.hpp"

using namespace minisgd;

namespace {

double in_the_documented_order(const std::vector<double>& t) {
  double total = 0;
  for (std::size_t b = 0; b < t.size(); b += 1024) {
    double s = 0;
    for (std::size_t i = b; i < t.size() && i < b + 1024; ++i) s += t[i];
    total += s;
  }
  return total;
}

/// ordered_sum over the terms t, on the execution space.
double ordered_sum_of(const std::vector<double>& t) {
  const std::size_t n = t.size();
  Vector<double> v("t", n);
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < n; ++i) h(i) = t[i];
  Kokkos::deep_copy(v, h);
  return ordered_sum(
      "test_ordered_sum", std::int64_t(n), KOKKOS_LAMBDA(const std::int64_t i) { return v(i); });
}

}  // namespace

TEST(OrderedSum, SumsInTheDocumentedOrder) {
  std::mt19937 gen(5);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-30, 30);
  for (const std::size_t n :
       {1, 5, 1023, 1024, 1025, 8 * 1024, 8 * 1024 + 5, 9 * 1024 + 1, 17 * 1024 - 3, 40000}) {
    std::vector<double> t(n);
    for (double& x : t) x = std::ldexp(mantissa(gen), exponent(gen));
    const double got = ordered_sum_of(t);
    const double expect = in_the_documented_order(t);
    EXPECT_EQ(std::memcmp(&got, &expect, sizeof got), 0)
        << "n " << n << ": " << got << " against " << expect;
  }
}
