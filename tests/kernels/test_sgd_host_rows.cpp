// The SGD step's vectorizable pieces against plain references: exp_vectorizable against the
// C library's exp evaluated in a wider type (a dense sweep of float bit patterns and the edges:
// ±0, subnormal results, the overflow and underflow thresholds, ±inf, NaN), the logistic
// derivative against a long double reference, and the host margin and gradient loops bit for
// bit against the scalar row_dot / add_row, alone and inside a whole SGD step, for every
// vector tier this CPU runs (generic: compile-time tails, 4-lane vectors; AVX2: 8-lane ones and
// an eight-row tree; AVX-512: one 16-lane register and masked tails), and each tier's whole
// step and team Gram (its exact sums' tiles) against the generic tier's. Which tier a default
// run takes: the widest the CPU has.
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(__CUDACC__)
#include <cpuid.h>
#endif
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "minisgd/core/simd/tier.hpp"
#include "minisgd/core/vector_math.hpp"
#include "minisgd/kernels/gram/gram.hpp"
#include "minisgd/kernels/host/host_kernels.hpp"
#include "minisgd/kernels/row_dot.hpp"
#include "minisgd/kernels/sgd_kernels.hpp"
#include "minisgd/kernels/tuning.hpp"
#include "minisgd/models/loss.hpp"
#include "support/simd_tiers.hpp"

using namespace minisgd;
using testing_support::EachTier;

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
  // Every 521st pattern: each exponent, some 16 000 mantissas of each (a prime stride).
  for (std::uint64_t bits = 0; bits <= 0xFFFFFFFFull; bits += 521) {
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
  // -0 .. -inf, every 127th pattern: each exponent, some 66 000 mantissas of each.
  for (std::uint32_t bits = 0x80000000u; bits <= 0xFF800000u; bits += 127) {
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

TEST(VectorLog1p, WithinOneUlpOfLongDoubleOnTheUnitInterval) {
  std::mt19937_64 gen(13);
  std::uniform_real_distribution<double> unit(0.0, 1.0), exponent(-1074.0, 0.0);
  double worst = 0, worst_x = 0;
  for (int i = 0; i < 2000000; ++i) {
    // uniform on [0, 1], and log-uniform down to the subnormals (the loss's e^−|t|)
    const double x = i % 2 ? unit(gen) : std::exp2(exponent(gen));
    const double e = ulps(log1p_unit(x), double(std::log1p((long double)x)));
    if (e > worst) worst = e, worst_x = x;
  }
  EXPECT_LE(worst, 1.0) << "at x = " << worst_x;
  // where the reduction switches (1 + x = √2), and the ends
  const double knee = std::sqrt(2.0) - 1.0;
  for (double x : {knee, std::nextafter(knee, 0.0), std::nextafter(knee, 1.0), 1.0,
                   std::nextafter(1.0, 0.0), 0x1p-53, 0x1p-52, 0x1p-30})
    EXPECT_LE(ulps(log1p_unit(x), double(std::log1p((long double)x))), 1.0) << "x = " << x;
  EXPECT_TRUE(same_bits(log1p_unit(0.0), 0.0));
  const double tiny = std::numeric_limits<double>::denorm_min();
  EXPECT_EQ(log1p_unit(tiny), tiny);
  EXPECT_TRUE(std::isnan(log1p_unit(std::numeric_limits<double>::quiet_NaN())));
}

TEST(VectorLog1p, LogisticLossWithinFourUlpOfLongDouble) {
  // max(t, 0) + log1p(e^−|t|), t = −yz, against log(1 + e^t) in long double
  std::mt19937_64 gen(17);
  std::uniform_real_distribution<double> wide(-800.0, 800.0), narrow(-5.0, 5.0);
  double worst = 0, worst_z = 0;
  for (int i = 0; i < 1000000; ++i) {
    const double z = i % 2 ? wide(gen) : narrow(gen), y = i % 4 < 2 ? 1.0 : -1.0;
    const long double t = -(long double)y * z;
    const long double want = t > 0 ? t + std::log1p(std::exp(-t)) : std::log1p(std::exp(t));
    const double e = ulps(loss_value<Loss::logistic>(z, y), double(want));
    if (e > worst) worst = e, worst_z = z;
  }
  EXPECT_LE(worst, 4.0) << "at z = " << worst_z;
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

/// The active tier's margins and gradient blocks on rows starting `shift` elements into the
/// buffer (every alignment of a 64-byte register for 16-bit and 32-bit storage), against
/// row_dot / add_row: every tail of a row, every width of a block (the full one included).
template <class S, class A>
void expect_rows_match_scalar(int shift) {
  const auto& loops = host::row_kernels<S, A>(simd::active_tier());
  const int block = gradient_block_columns<A>(simd::active_tier());
  std::mt19937 gen(3 + shift);
  std::normal_distribution<double> normal;
  for (int n = 1; n <= block + 12; n += n < 40 || n > block - 4 ? 1 : 11) {
    const int rows = 37;  // not a multiple of anything
    std::vector<S> buffer(std::size_t(rows) * n + shift);
    std::vector<A> w(n), u(rows);
    S* const x = buffer.data() + shift;
    for (auto& v : buffer) v = precision::convert<S>(normal(gen));
    for (auto& v : w) v = A(normal(gen));
    for (auto& v : u) v = A(normal(gen));
    std::vector<A> z(rows);
    loops.margins(x, n, w.data(), n, rows, z.data());
    for (int i = 0; i < rows; ++i) {
      const A want = row_dot(x + std::size_t(i) * n, w.data(), n);
      ASSERT_EQ(0, std::memcmp(&z[i], &want, sizeof want)) << "n = " << n << " row " << i;
    }
    // a block of each width up to n (rows n apart), and the whole row
    for (int width = 1; width <= n; width = width <= block || width == n ? width + 1 : n) {
      std::vector<A> g(width, A(0.25)), want(width, A(0));
      loops.chunk_sum(x, n, width, u.data(), rows, g.data());
      for (int i = 0; i < rows; ++i) add_row(x + std::size_t(i) * n, u[i], want.data(), width);
      ASSERT_EQ(0, std::memcmp(g.data(), want.data(), sizeof(A) * width))
          << "n = " << n << " width " << width << " shift " << shift;
    }
  }
}

class SgdHostRows : public EachTier {};
MINISGD_FOR_EACH_TIER(SgdHostRows);

TEST_P(SgdHostRows, MarginsAndGradientBlocksMatchTheScalarLoopsBitForBit) {
  for (int shift : {0, 1, 7, 15}) {
    expect_rows_match_scalar<float, float>(shift);
    expect_rows_match_scalar<double, double>(shift);
    expect_rows_match_scalar<float, double>(shift);
    expect_rows_match_scalar<double, float>(shift);
    expect_rows_match_scalar<precision::bf16, float>(shift);
    expect_rows_match_scalar<precision::fp16, float>(shift);
    // the evaluation's FP64 margins of every storage type (kernels/objective.hpp)
    expect_rows_match_scalar<precision::bf16, double>(shift);
    expect_rows_match_scalar<precision::fp16, double>(shift);
  }
}

/// Every 16-bit code widened by the tier (the gather's cast into float) against to_float:
/// NaN payloads, infinities and subnormals included, at every alignment and run length that
/// leaves a scalar tail.
template <class S>
void expect_every_code_widens_exactly() {
  std::vector<S> codes(65536 + 37);
  for (std::uint32_t c = 0; c < codes.size(); ++c) codes[c] = S{std::uint16_t(c * 40503u)};
  std::vector<float> out(codes.size());
  const auto widen = host::cast_kernel<S, float>(simd::active_tier());
  for (int offset : {0, 1, 3, 17}) {
    const std::int64_t n = std::int64_t(codes.size()) - offset;
    widen(codes.data() + offset, out.data(), n);
    for (std::int64_t i = 0; i < n; ++i)
      ASSERT_EQ(precision::to_bits(out[i]),
                precision::to_bits(precision::to_float(codes[offset + i])))
          << std::hex << "code " << codes[offset + i].bits << " offset " << offset;
  }
}

TEST_P(SgdHostRows, EveryCodeWidensToItsValue) {
  expect_every_code_widens_exactly<precision::fp16>();
  expect_every_code_widens_exactly<precision::bf16>();
}

/// One whole SGD gradient (sgd_gradient: margins, derivatives, gradient, chunk by chunk,
/// narrow storage widened or read directly) against the scalar functions in the documented
/// order, bit for bit.
template <class S, class A>
void expect_step_matches_scalar(int n, std::int64_t b, std::int64_t first) {
  if constexpr (!kHostMemory) GTEST_SKIP() << "device margins sum in teams";
  const std::int64_t m = first + b + 3;
  Matrix<S> X("X", m, n);
  Vector<double> y("y", m);
  Vector<A> w("w", n), z("z", b), u("u", b), g("g", n);
  std::mt19937 gen(std::uint32_t(n * 131 + b));
  std::normal_distribution<double> normal;
  auto Xh = Kokkos::create_mirror_view(X);
  auto yh = Kokkos::create_mirror_view(y);
  auto wh = Kokkos::create_mirror_view(w);
  for (std::int64_t i = 0; i < m; ++i) {
    yh(i) = normal(gen) < 0 ? -1.0 : 1.0;
    for (int c = 0; c < n; ++c) Xh(i, c) = precision::convert<S>(normal(gen));
  }
  for (int c = 0; c < n; ++c) wh(c) = A(0.3 * normal(gen));
  Kokkos::deep_copy(X, Xh);
  Kokkos::deep_copy(y, yh);
  Kokkos::deep_copy(w, wh);
  sgd_gradient<Loss::logistic>(X, first, y, w, z, false, u, g);
  auto gh = Kokkos::create_mirror_view(g);
  Kokkos::deep_copy(gh, g);
  // chunk by chunk of 32 rows: each chunk's rows from zero in row order, the chunks in order
  std::vector<A> want(n, A(0));
  for (std::int64_t r0 = 0; r0 < b; r0 += 32) {
    std::vector<A> chunk(n, A(0));
    for (std::int64_t i = r0; i < std::min(b, r0 + 32); ++i) {
      const S* x = &Xh(first + i, 0);
      const A zi = row_dot(x, wh.data(), n);
      add_row(x, loss_derivative<Loss::logistic>(zi, A(yh(first + i))), chunk.data(), n);
    }
    for (int c = 0; c < n; ++c) want[c] += chunk[c];
  }
  ASSERT_EQ(0, std::memcmp(gh.data(), want.data(), sizeof(A) * n))
      << "n = " << n << " b = " << b << " first = " << first;
}

TEST_P(SgdHostRows, WholeStepMatchesTheScalarFunctionsBitForBit) {
  for (int n : {1, 5, 16, 17, 28, 31, 127, 128, 129, 300, 2000})
    for (std::int64_t b : {1, 3, 32, 33, 70})
      for (std::int64_t first : {0, 1, 6}) {
        expect_step_matches_scalar<float, float>(n, b, first);
        expect_step_matches_scalar<precision::bf16, float>(n, b, first);
        expect_step_matches_scalar<precision::fp16, float>(n, b, first);
        expect_step_matches_scalar<double, double>(n, b, first);
      }
}

// Ten chunks at the widths whose margins go a group of chunks at a time (kernels/tuning.hpp,
// margins_group): whole groups and a last partial one.
TEST_P(SgdHostRows, GroupedMarginsStepMatchesTheScalarFunctionsBitForBit) {
  for (int n : {127, 128, 129, 300})
    for (std::int64_t first : {0, 1}) {
      expect_step_matches_scalar<float, float>(n, 300, first);
      expect_step_matches_scalar<precision::bf16, float>(n, 300, first);
      expect_step_matches_scalar<precision::fp16, float>(n, 300, first);
      expect_step_matches_scalar<double, double>(n, 300, first);
    }
}

/// The margins, derivatives and gradient of one SGD step on tier t.
template <class S, class A>
struct StepResult {
  std::vector<A> z, u, g;
};
template <class S, class A>
StepResult<S, A> step_on(simd::Tier t, int n, std::int64_t b, bool margins_given) {
  EXPECT_TRUE(simd::use_tier(t));
  const std::int64_t m = b + 9, first = 4;
  Matrix<S> X("X", m, n);
  Vector<double> y("y", m);
  Vector<A> w("w", n), z("z", b), u("u", b), g("g", n);
  std::mt19937 gen(std::uint32_t(n * 7 + b));
  std::normal_distribution<double> normal;
  auto Xh = Kokkos::create_mirror_view(X);
  auto yh = Kokkos::create_mirror_view(y);
  auto wh = Kokkos::create_mirror_view(w);
  auto zh = Kokkos::create_mirror_view(z);
  for (std::int64_t i = 0; i < m; ++i) {
    yh(i) = normal(gen) < 0 ? -1.0 : 1.0;
    for (int c = 0; c < n; ++c) Xh(i, c) = precision::convert<S>(normal(gen));
  }
  for (int c = 0; c < n; ++c) wh(c) = A(0.3 * normal(gen));
  for (std::int64_t i = 0; i < b; ++i) zh(i) = A(normal(gen));
  Kokkos::deep_copy(X, Xh);
  Kokkos::deep_copy(y, yh);
  Kokkos::deep_copy(w, wh);
  Kokkos::deep_copy(z, zh);
  sgd_gradient<Loss::logistic>(X, first, y, w, z, margins_given, u, g);
  const auto host = [](const Vector<A>& v) {
    const auto h = Kokkos::create_mirror_view_and_copy(HostSpace(), v);
    return std::vector<A>(h.data(), h.data() + h.extent(0));
  };
  return {host(z), host(u), host(g)};
}

template <class S, class A>
void expect_tiers_agree() {
  for (int n : {3, 28, 129, 2000})
    for (std::int64_t b : {5, 70, 300})
      for (bool given : {false, true}) {
        const auto want = step_on<S, A>(simd::Tier::generic, n, b, given);
        for (simd::Tier t : testing_support::runnable_tiers()) {
          const auto got = step_on<S, A>(t, n, b, given);
          const auto same = [](const std::vector<A>& a, const std::vector<A>& c) {
            return a.size() == c.size() &&
                   std::memcmp(a.data(), c.data(), sizeof(A) * a.size()) == 0;
          };
          EXPECT_TRUE(same(got.z, want.z) && same(got.u, want.u) && same(got.g, want.g))
              << simd::name(t) << " n " << n << " b " << b << " margins given " << given;
        }
      }
  simd::use_tier(simd::best_tier());
}

// Each tier's whole step (margins, derivatives, gradient) against the generic tier's, bit for
// bit: the tiers differ in every loop, not in any sum.
TEST(SimdTiers, EveryTierGivesTheGenericTiersStepBitForBit) {
  if constexpr (!kHostMemory) GTEST_SKIP() << "host kernels only";
  expect_tiers_agree<float, float>();
  expect_tiers_agree<precision::bf16, float>();
  expect_tiers_agree<precision::fp16, float>();
  expect_tiers_agree<double, double>();
  expect_tiers_agree<precision::bf16, double>();
}

/// The team Gram (kernels/gram/gram.cpp) of Y on tier t, and its entries summed as the team
/// kernel sums them: from zero over k in order, each product rounded, then the sum.
template <class In, class Acc>
std::vector<Acc> team_gram_on(simd::Tier t, const Matrix<In>& Y, std::int64_t b) {
  EXPECT_TRUE(simd::use_tier(t));
  const Vector<Acc> G("G", gram_packed_size(std::int64_t(Y.extent(0)) / b, b));
  gram_team(Y, b, G, precision::Rounder{});
  const auto h = Kokkos::create_mirror_view_and_copy(HostSpace(), G);
  return std::vector<Acc>(h.data(), h.data() + h.extent(0));
}
template <class In, class Acc>
std::vector<Acc> gram_in_order(const Matrix<In>& Y, std::int64_t b) {
  const auto y = Kokkos::create_mirror_view_and_copy(HostSpace(), Y);
  const std::int64_t s = std::int64_t(Y.extent(0)) / b, n = Y.extent(1);
  std::vector<Acc> G(std::size_t(gram_packed_size(s, b)));
  for (std::int64_t j = 1; j < s; ++j)
    for (std::int64_t i = 0; i < b; ++i)
      for (std::int64_t c = 0; c < j * b; ++c) {
        Acc sum = 0;
        for (std::int64_t k = 0; k < n; ++k) {
          const Acc product =
              precision::convert<Acc>(y(j * b + i, k)) * precision::convert<Acc>(y(c, k));
          sum += product;
        }
        G[std::size_t(gram_row_offset(j, b) + i * j * b + c)] = sum;
      }
  return G;
}

/// Shapes with ragged tiles (b not a multiple of kGramTile, n not one of kGramDepth) and whole
/// ones: every tier's team Gram has the in-order sums' bits.
template <class In, class Acc>
void expect_gram_tiers_agree() {
  const std::int64_t shapes[][3] = {{2, 1, 5}, {5, 8, 77}, {4, 33, 300}, {3, 40, 32}, {3, 32, 64}};
  for (const auto& [s, b, n] : shapes) {
    Matrix<In> Y("Y", s * b, n);
    auto Yh = Kokkos::create_mirror_view(Y);
    std::mt19937 gen(std::uint32_t(s * 1000 + b * 10 + n));
    std::normal_distribution<double> normal;
    for (std::int64_t i = 0; i < s * b; ++i)
      for (std::int64_t k = 0; k < n; ++k) Yh(i, k) = precision::convert<In>(normal(gen));
    Kokkos::deep_copy(Y, Yh);
    const auto want = gram_in_order<In, Acc>(Y, b);
    const auto generic = team_gram_on<In, Acc>(simd::Tier::generic, Y, b);
    for (simd::Tier t : testing_support::runnable_tiers()) {
      const auto got = team_gram_on<In, Acc>(t, Y, b);
      ASSERT_EQ(got.size(), want.size());
      EXPECT_EQ(0, std::memcmp(got.data(), generic.data(), sizeof(Acc) * got.size()))
          << simd::name(t) << " against generic: s " << s << " b " << b << " n " << n;
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), sizeof(Acc) * got.size()))
          << simd::name(t) << " against the in-order sums: s " << s << " b " << b << " n " << n;
    }
  }
  simd::use_tier(simd::best_tier());
}

// Each tier's team Gram tiles (the exact accumulation of every input and accumulator pair)
// against the generic tier's and the scalar sums, bit for bit.
TEST(SimdTiers, EveryTierGivesTheTeamGramsSumsBitForBit) {
  if constexpr (!kHostMemory) GTEST_SKIP() << "host kernels only";
  expect_gram_tiers_agree<float, float>();
  expect_gram_tiers_agree<double, double>();
  expect_gram_tiers_agree<double, float>();
  expect_gram_tiers_agree<float, double>();
  expect_gram_tiers_agree<precision::bf16, float>();
  expect_gram_tiers_agree<precision::fp16, float>();
  expect_gram_tiers_agree<precision::bf16, double>();
  expect_gram_tiers_agree<precision::fp16, double>();
}

// A default run takes the widest tier that is compiled in and that this CPU runs (within the
// build's fixed target, MINISGD_ARCH), found here from the CPU's own feature flags; and the
// build compiles in every tier CMake said it would (MINISGD_SIMD).
TEST(SimdTiers, ADefaultRunTakesTheWidestTierTheCpuRuns) {
  std::istringstream listed(MINISGD_TEST_SIMD_TIERS);  // (tests/CMakeLists.txt)
  for (std::string t; listed >> t;) {
    bool found = false;
    for (simd::Tier tier : {simd::Tier::generic, simd::Tier::avx2, simd::Tier::avx512})
      if (simd::name(tier) == t) found = simd::compiled(tier);
    EXPECT_TRUE(found) << t << " is not compiled in";
  }
  simd::Tier widest = simd::Tier::generic;
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(__CUDACC__)                // (a CUDA build compiles the generic tier alone)
  unsigned a = 0, b = 0, c = 0, d = 0;  // F16C from CPUID (Clang's builtin does not know it)
  const bool f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
  const bool avx2 = __builtin_cpu_supports("avx2") && f16c;
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512vl");
#ifdef MINISGD_TEST_FIXED_TARGET
  const bool target512 =
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
      true;
#else
      false;
#endif
  const bool target2 =
#if defined(__AVX2__) && defined(__F16C__)
      true;
#else
      false;
#endif
#else
  const bool target512 = true, target2 = true;
#endif
  if (avx2 && target2 && simd::compiled(simd::Tier::avx2)) widest = simd::Tier::avx2;
  if (avx512 && target512 && simd::compiled(simd::Tier::avx512)) widest = simd::Tier::avx512;
#endif
  EXPECT_EQ(simd::name(simd::best_tier()), std::string(simd::name(widest)));
  std::cout << "[   simd   ] a default run takes the " << simd::name(simd::best_tier())
            << " tier (compiled in: " << MINISGD_TEST_SIMD_TIERS << ")\n";
  RecordProperty("simd_tier", simd::name(simd::best_tier()));
}

}  // namespace
