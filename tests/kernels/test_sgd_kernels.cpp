// SGD's step kernels on every backend against plain loops: the gradient product bit for bit
// against the chunk loop that fixes its order (each chunk of 32 rows summed from zero in row
// order, the chunks added in order; the host's fused pass and the devices' team kernel must
// both make exactly these additions), for each loss, storage type and batch shape (one chunk,
// several, a last partial chunk, more chunks than a device team sums at once); the margins
// against a double-precision dot product, close to rounding (their order differs by backend).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "minisgd/kernels/sgd_kernels.hpp"
#include "testkit/random_matrix.hpp"

using namespace minisgd;
using precision::bf16;

namespace {

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

constexpr std::int64_t kFirst = 5;  // the batch starts inside X, not at its first row

/// Labels the loss takes: ±1 (logistic), counts (Poisson), reals (linear).
template <Loss L>
Vector<double> labels(std::int64_t rows, std::uint64_t seed) {
  Vector<double> y("y", rows);
  auto h = Kokkos::create_mirror_view(y);
  std::mt19937_64 gen(seed);
  for (std::int64_t i = 0; i < rows; ++i) {
    if constexpr (L == Loss::logistic)
      h(i) = gen() % 2 ? 1.0 : -1.0;
    else if constexpr (L == Loss::poisson)
      h(i) = double(gen() % 4);
    else
      h(i) = double(std::int64_t(gen() % 2001) - 1000) / 500.0;
  }
  Kokkos::deep_copy(y, h);
  return y;
}

template <Loss L, class S, class A>
void check_gradient(std::int64_t b, int n) {
  const std::uint64_t seed = std::uint64_t(b * 4099 + n);
  const auto X = testkit::random_rows<S>(kFirst + b + 3, n, seed);
  const auto y = labels<L>(kFirst + b + 3, seed + 1);
  Vector<A> w("w", n), z("z", b), u("u", b), g("g", n);
  {  // given margins (the column decomposition's), so that only the gradient's order counts
    auto hz = Kokkos::create_mirror_view(z);
    std::mt19937_64 gen(seed + 2);
    std::normal_distribution<double> normal(0.0, 2.0);
    for (std::int64_t i = 0; i < b; ++i) hz(i) = A(normal(gen));
    Kokkos::deep_copy(z, hz);
  }
  sgd_gradient<L>(X, kFirst, y, w, z, true, u, g);
  const auto hX = Kokkos::create_mirror_view_and_copy(HostSpace(), X);
  const auto hy = Kokkos::create_mirror_view_and_copy(HostSpace(), y);
  const auto hz = Kokkos::create_mirror_view_and_copy(HostSpace(), z);
  const auto hg = Kokkos::create_mirror_view_and_copy(HostSpace(), g);
  std::vector<A> want(std::size_t(n), A(0));
  for (std::int64_t r0 = 0; r0 < b; r0 += 32)
    for (int c = 0; c < n; ++c) {
      A part = 0;
      for (std::int64_t i = r0; i < std::min<std::int64_t>(b, r0 + 32); ++i)
        part +=
            precision::convert<A>(hX(kFirst + i, c)) * loss_derivative<L>(hz(i), A(hy(kFirst + i)));
      want[std::size_t(c)] += part;
    }
  for (int c = 0; c < n; ++c)
    ASSERT_TRUE(same_bits(hg(c), want[std::size_t(c)]))
        << "b " << b << " n " << n << " column " << c << ": " << hg(c) << " vs "
        << want[std::size_t(c)];
}

template <class S, class A>
void check_margins(std::int64_t b, int n) {
  const auto X = testkit::random_rows<S>(kFirst + b + 3, n, std::uint64_t(b * 31 + n));
  Vector<A> w("w", n), z("z", b);
  {
    auto hw = Kokkos::create_mirror_view(w);
    std::mt19937_64 gen{std::uint64_t(n)};
    std::normal_distribution<double> normal(0.0, 1.0);
    for (int c = 0; c < n; ++c) hw(c) = A(normal(gen));
    Kokkos::deep_copy(w, hw);
  }
  sgd_margins(X, kFirst, w, z);
  const auto hX = Kokkos::create_mirror_view_and_copy(HostSpace(), X);
  const auto hw = Kokkos::create_mirror_view_and_copy(HostSpace(), w);
  const auto hz = Kokkos::create_mirror_view_and_copy(HostSpace(), z);
  for (std::int64_t i = 0; i < b; ++i) {
    double want = 0, magnitude = 0;
    for (int c = 0; c < n; ++c) {
      const double p = precision::convert<double>(hX(kFirst + i, c)) * double(hw(c));
      want += p;
      magnitude += std::abs(p);
    }
    // A sum of n products in A, in any order: at most about n·ε·Σ|p| away.
    const double eps = double(std::numeric_limits<A>::epsilon());
    ASSERT_NEAR(double(hz(i)), want, 2.0 * n * eps * magnitude + 1e-300)
        << "b " << b << " n " << n << " row " << i;
  }
}

// Batch shapes: below, at and above a chunk, a last partial chunk, and more chunks than a
// device team sums at once (b = 300: 10 chunks); widths below, at and above a device team's 32
// columns, HIGGS' 28 and epsilon's 2000.
constexpr std::int64_t kBatches[] = {1, 7, 32, 70, 256, 300};
constexpr int kWidths[] = {1, 5, 28, 32, 33, 300, 2000};

TEST(SgdKernels, GradientIsTheChunkLoopBitForBit) {
  for (std::int64_t b : kBatches)
    for (int n : kWidths) {
      check_gradient<Loss::logistic, float, float>(b, n);
      check_gradient<Loss::logistic, bf16, float>(b, n);
      check_gradient<Loss::logistic, double, double>(b, n);
      check_gradient<Loss::poisson, float, float>(b, n);
      check_gradient<Loss::linear, float, double>(b, n);
    }
}

TEST(SgdKernels, MarginsAreTheRowDotProducts) {
  for (std::int64_t b : kBatches)
    for (int n : kWidths) {
      check_margins<float, float>(b, n);
      check_margins<bf16, float>(b, n);
      check_margins<double, double>(b, n);
    }
}

}  // namespace
