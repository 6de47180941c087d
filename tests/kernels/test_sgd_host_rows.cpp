// The SGD step's vectorizable pieces against plain references: exp_vectorizable against the
// C library's exp evaluated in a wider type (a dense sweep of float bit patterns and the edges:
// ±0, subnormal results, the overflow and underflow thresholds, ±inf, NaN), the logistic
// derivative against a long double reference, and the host margin and gradient loops
// (compile-time tails, 4-lane vectors) bit for bit against the scalar row_dot / add_row.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "minisgd/core/vector_math.hpp"
#include "minisgd/kernels/sgd_host_rows.hpp"
#include "minisgd/models/loss.hpp"

using namespace minisgd;

namespace {

/// Distance in units in the last place (0 for equal values, NaN for NaN).
template <class R>
double ulps(R got, R want) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want) ? 0 : 1e30;
  if (got == want) return 0;
  using I = std::conditional_t<sizeof(R) == 4, std::int32_t, std::int64_t>;
  I a, b;
  std::memcpy(&a, &got, sizeof a);
  std::memcpy(&b, &want, sizeof b);
  if ((a < 0) != (b < 0)) return 1e30;
  return double(a > b ? a - b : b - a);  // in integers: a double would round it
}

TEST(VectorExp, FloatWithinOneUlpOfTheRoundedExpOverADenseSweep) {
  double worst = 0;
  float worst_x = 0;
  for (std::uint64_t bits = 0; bits <= 0xFFFFFFFFull; bits += 131) {  // every 131st pattern
    float x;
    const std::uint32_t b32 = std::uint32_t(bits);
    std::memcpy(&x, &b32, sizeof x);
    const double e = ulps(exp_vectorizable(x), float(std::exp(double(x))));
    if (e > worst) worst = e, worst_x = x;
  }
  EXPECT_LE(worst, 1.0) << "at x = " << worst_x;
}

TEST(VectorExp, DoubleWithinTwoUlpOfLongDoubleExp) {
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> wide(-750.0, 750.0), narrow(-2.0, 2.0);
  double worst = 0, worst_x = 0;
  for (int i = 0; i < 2000000; ++i) {
    const double x = i % 2 ? wide(gen) : narrow(gen);
    const double e = ulps(exp_vectorizable(x), double(std::exp((long double)x)));
    if (e > worst) worst = e, worst_x = x;
  }
  EXPECT_LE(worst, 2.0) << "at x = " << worst_x;
}

template <class R>
void expect_edges() {
  const R inf = std::numeric_limits<R>::infinity();
  const R tiny = std::numeric_limits<R>::denorm_min();
  EXPECT_EQ(exp_vectorizable(R(0)), R(1));
  EXPECT_EQ(exp_vectorizable(-R(0)), R(1));
  EXPECT_EQ(exp_vectorizable(inf), inf);
  EXPECT_EQ(exp_vectorizable(-inf), R(0));
  EXPECT_FALSE(std::signbit(exp_vectorizable(-inf)));
  EXPECT_TRUE(std::isnan(exp_vectorizable(std::numeric_limits<R>::quiet_NaN())));
  EXPECT_EQ(exp_vectorizable(std::numeric_limits<R>::max()), inf);
  EXPECT_EQ(exp_vectorizable(std::numeric_limits<R>::lowest()), R(0));
  // around the largest finite result and the smallest subnormal one
  const R top = std::log(std::numeric_limits<R>::max());
  const R bottom = std::log(tiny);
  for (R x : {top, std::nextafter(top, inf), std::nextafter(top, -inf), bottom,
              std::nextafter(bottom, inf), bottom - R(0.5), bottom - R(1), R(0.5) * bottom,
              std::log(std::numeric_limits<R>::min())}) {
    const R want = R(std::exp((long double)x));
    EXPECT_LE(ulps(exp_vectorizable(x), want), 1.0) << "x = " << x;
  }
  EXPECT_GT(exp_vectorizable(bottom), R(0));  // a subnormal result, not flushed
}

TEST(VectorExp, EdgesFloat) { expect_edges<float>(); }
TEST(VectorExp, EdgesDouble) { expect_edges<double>(); }

template <class R>
bool same_bits(R a, R b) {
  return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b));
}

TEST(VectorExp, NonpositiveHasTheBitsOfTheGeneralExp) {
  for (std::uint32_t bits = 0x80000000u; bits <= 0xFF800000u; bits += 7) {  // -0 .. -inf
    float x;
    std::memcpy(&x, &bits, sizeof x);
    ASSERT_TRUE(same_bits(exp_nonpositive(x), exp_vectorizable(x))) << "x = " << x;
  }
  std::mt19937_64 gen(11);
  std::uniform_real_distribution<double> wide(-760.0, 0.0), narrow(-2.0, 0.0);
  for (int i = 0; i < 2000000; ++i) {
    const double x = i % 2 ? wide(gen) : narrow(gen);
    ASSERT_TRUE(same_bits(exp_nonpositive(x), exp_vectorizable(x))) << "x = " << x;
  }
  for (double x : {-0.0, -std::numeric_limits<double>::infinity(),
                   -std::numeric_limits<double>::max(), std::log(4.9406564584124654e-324)})
    EXPECT_TRUE(same_bits(exp_nonpositive(x), exp_vectorizable(x))) << "x = " << x;
  EXPECT_TRUE(std::isnan(exp_nonpositive(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(exp_nonpositive(std::numeric_limits<double>::quiet_NaN())));
  EXPECT_GT(exp_nonpositive(std::log(std::numeric_limits<float>::denorm_min())), 0.0f);
}

TEST(VectorExp, LogisticDerivativeIsAccurateForBothSignsAndLargeMargins) {
  for (double y : {-1.0, 1.0})
    for (double z = -800; z <= 800; z += 0.37) {
      // -y·σ(-yz) in long double, from the margin as each precision holds it
      const auto want = [y](long double zz) { return -y / (1 + std::exp(y * zz)); };
      const double got = loss_derivative<Loss::logistic>(z, y);
      EXPECT_LE(ulps(got, double(want(z))), 4.0) << "z = " << z << " y = " << y;
      const float zf = float(z), gotf = loss_derivative<Loss::logistic>(zf, float(y));
      EXPECT_LE(ulps(gotf, float(want(zf))), 4.0) << "z = " << zf << " y = " << y;
    }
}

template <class S, class A>
void expect_rows_match_scalar() {
  std::mt19937 gen(3);
  std::normal_distribution<double> normal;
  for (int n = 1; n <= 70; ++n) {
    const int rows = 37;  // not a multiple of anything
    std::vector<S> x(std::size_t(rows) * n);
    std::vector<A> w(n), u(rows);
    for (auto& v : x) v = precision::convert<S>(normal(gen));
    for (auto& v : w) v = A(normal(gen));
    for (auto& v : u) v = A(normal(gen));
    std::vector<A> z(rows);
    sgd_detail::rows_dot(x.data(), n, w.data(), n, rows, z.data());
    for (int i = 0; i < rows; ++i) {
      const A want = sgd_detail::row_dot(x.data() + std::size_t(i) * n, w.data(), n);
      ASSERT_EQ(0, std::memcmp(&z[i], &want, sizeof want)) << "n = " << n << " row " << i;
    }
    constexpr int kCols = 32;
    for (int width = 1; width < kCols && width <= n; ++width) {
      std::vector<A> g(width, A(0.25)), want(width, A(0.25));
      sgd_detail::add_rows_narrow<kCols>(x.data(), n, u.data(), rows, g.data(), width);
      for (int i = 0; i < rows; ++i)
        sgd_detail::add_row(x.data() + std::size_t(i) * n, u[i], want.data(), width);
      ASSERT_EQ(0, std::memcmp(g.data(), want.data(), sizeof(A) * width))
          << "n = " << n << " width " << width;
    }
  }
}

TEST(SgdHostRows, MarginsAndGradientBlocksMatchTheScalarLoopsBitForBit) {
  expect_rows_match_scalar<float, float>();
  expect_rows_match_scalar<double, double>();
  expect_rows_match_scalar<float, double>();
  expect_rows_match_scalar<precision::bf16, float>();
  expect_rows_match_scalar<precision::fp16, float>();
}

}  // namespace
