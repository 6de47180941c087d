// CA-SGD's streaming kernels on host backends bit for bit against plain loops, for every
// vector tier this CPU runs: the partial margins against SGD's scalar margin (row_dot: 16
// partial sums, a fixed tree) for every storage type and every tail length, through both the
// long-row and the short-row path (and, on the AVX2 and AVX-512 tiers, the loops that widen
// bf16 and fp16 in registers);
// the gradient product against the row-by-row loop (exact, and rounded to bf16 after every
// operation), through the short-row register path and the long-row path; the gather/cast
// against precision::convert element by element, special values included (NaN payloads, infinities,
// subnormals, ties, values that round up to infinity).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "minisgd/kernels/ca_sgd_kernels.hpp"
#include "minisgd/kernels/row_dot.hpp"
#include "support/simd_tiers.hpp"

using namespace minisgd;
using precision::bf16;
using precision::fp16;

namespace {

constexpr bool kHost = Kokkos::SpaceAccessibility<HostSpace, MemSpace>::accessible;

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

/// A matrix of `rows` × n random values stored as S (host mirror filled, copied over).
template <class S>
Matrix<S> random_matrix(std::int64_t rows, int n, std::uint64_t seed) {
  Matrix<S> X("X", rows, n);
  auto h = Kokkos::create_mirror_view(X);
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (std::int64_t i = 0; i < rows; ++i)
    for (int c = 0; c < n; ++c) h(i, c) = precision::convert<S>(normal(gen));
  Kokkos::deep_copy(X, h);
  return X;
}

template <class A>
Vector<A> random_vector(std::int64_t n, std::uint64_t seed) {
  Vector<A> v("v", n);
  auto h = Kokkos::create_mirror_view(v);
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (std::int64_t i = 0; i < n; ++i) h(i) = A(normal(gen));
  Kokkos::deep_copy(v, h);
  return v;
}

/// `steps` batches of b rows in X, not adjacent and not in order: batch j starts at row
/// (steps − j)·(b + 3).
BatchRows scattered_batches(int steps, std::int64_t b) {
  BatchRows first("first", steps);
  auto h = Kokkos::create_mirror_view(first);
  for (int j = 0; j < steps; ++j) h(j) = (steps - j) * (b + 3);
  Kokkos::deep_copy(first, h);
  return first;
}

template <class S, class A>
void check_margins(int n, std::int64_t b, int steps) {
  const auto X = random_matrix<S>((steps + 1) * (b + 3), n, 1000 + n);
  const auto w = random_vector<A>(n, 7 + n);
  const BatchRows first = scattered_batches(steps, b);
  const Vector<A> r("r", steps * b);
  partial_margins(X, first, b, w, precision::Exact{}, r);
  const auto hX = Kokkos::create_mirror_view_and_copy(HostSpace(), X);
  const auto hw = Kokkos::create_mirror_view_and_copy(HostSpace(), w);
  const auto hr = Kokkos::create_mirror_view_and_copy(HostSpace(), r);
  const auto hf = Kokkos::create_mirror_view_and_copy(HostSpace(), first);
  for (std::int64_t q = 0; q < steps * b; ++q) {
    const A want = row_dot(&hX(hf(q / b) + q % b, 0), hw.data(), n);
    ASSERT_TRUE(same_bits(hr(q), want))
        << "n " << n << " b " << b << " row " << q << ": " << hr(q) << " vs " << want;
  }
}

/// g(c) = Σ_q X(row q, c)·v(q): rounded as `round` after every operation, in row order; exact,
/// in SGD's order (each batch's chunks of 32 rows summed from zero, the chunks added in order).
template <class S, class A, class Round>
void check_gradient(int n, std::int64_t b, int steps, const Round& round) {
  const auto X = random_matrix<S>((steps + 1) * (b + 3), n, 2000 + n);
  const auto v = random_vector<A>(steps * b, 11 + n);
  const BatchRows first = scattered_batches(steps, b);
  const Vector<A> g("g", n);
  gradient_product(X, first, b, steps, v, round, g);
  const auto hX = Kokkos::create_mirror_view_and_copy(HostSpace(), X);
  const auto hv = Kokkos::create_mirror_view_and_copy(HostSpace(), v);
  const auto hg = Kokkos::create_mirror_view_and_copy(HostSpace(), g);
  const auto hf = Kokkos::create_mirror_view_and_copy(HostSpace(), first);
  const auto x = [&](std::int64_t q, int c) {
    return precision::convert<A>(hX(hf(q / b) + q % b, c));
  };
  std::vector<A> want(n, A(0));
  if constexpr (std::is_same_v<Round, precision::Exact>) {
    for (std::int64_t q0 = 0; q0 < steps * b; q0 += b)  // a batch
      for (std::int64_t r0 = 0; r0 < b; r0 += 32)       // a chunk of it
        for (int c = 0; c < n; ++c) {
          A part = 0;
          for (std::int64_t q = q0 + r0; q < q0 + std::min<std::int64_t>(b, r0 + 32); ++q)
            part += x(q, c) * hv(q);
          want[c] += part;
        }
  } else {
    for (std::int64_t q = 0; q < steps * b; ++q)
      for (int c = 0; c < n; ++c) want[c] = round(want[c] + round(x(q, c) * hv(q)));
  }
  for (int c = 0; c < n; ++c)
    ASSERT_TRUE(same_bits(hg(c), want[c]))
        << "n " << n << " b " << b << " steps " << steps << " column " << c;
}

}  // namespace

class CaSgdKernels : public testing_support::EachTier {};
MINISGD_FOR_EACH_TIER(CaSgdKernels);

// Every tail length n mod 16, short rows (the widened buffer for narrow storage) and long
// ones, b below, at and above the 32 rows of a work item.
TEST_P(CaSgdKernels, PartialMarginsAreSgdsMarginBitForBit) {
  // (if constexpr: nvcc warns of an unreachable loop after a constant early return)
  if constexpr (!kHost) {
    GTEST_SKIP() << "host kernels only (devices reduce in a team)";
  } else {
    for (int n : {1, 2, 3, 5, 7, 15, 16, 17, 28, 29, 31, 33, 47, 63, 64, 65, 100, 257, 2000})
      for (std::int64_t b : {1, 5, 32, 37}) {
        check_margins<float, float>(n, b, 3);
        check_margins<double, double>(n, b, 3);
        check_margins<float, double>(n, b, 2);
        check_margins<bf16, float>(n, b, 3);
        check_margins<fp16, float>(n, b, 2);
        check_margins<bf16, double>(n, b, 2);
      }
  }
}

// Exact sums: SGD's chunk loops, every tail width, batches of one chunk and of several (b = 70),
// and 2000 columns over 3 batches of 70 (1.7 MB of fp32: threads take chunks where there are
// several). Rounded sums: the row-by-row loop.
TEST_P(CaSgdKernels, GradientProductIsTheReferenceLoopBitForBit) {
  const precision::RoundTo<bf16, false> to_bf16{};
  for (int n : {1, 3, 4, 7, 8, 19, 28, 29, 31, 32, 33, 35, 36, 37, 47, 48, 49, 64, 500, 2000})
    for (std::int64_t b : {1, 6, 32, 70})
      for (int steps : {1, 3}) {
        check_gradient<float, float>(n, b, steps, precision::Exact{});
        check_gradient<bf16, float>(n, b, steps, precision::Exact{});
        check_gradient<fp16, float>(n, b, steps, precision::Exact{});
        check_gradient<double, double>(n, b, steps, precision::Exact{});
        check_gradient<float, double>(n, b, steps, precision::Exact{});
        check_gradient<bf16, float>(n, b, steps, to_bf16);
        check_gradient<float, double>(n, b, steps, to_bf16);
      }
}

namespace {

/// Float bit patterns that exercise the cast: NaNs (quiet, signalling, with payloads), ±inf,
/// ±0, subnormals, ties to even both ways, the largest finite values (which round to inf).
std::vector<float> special_floats() {
  const std::uint32_t bits[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF812345u, 0x7FBFFFFFu,
                                0x7F800000u, 0xFF800000u, 0x00000000u, 0x80000000u, 0x00000001u,
                                0x807FFFFFu, 0x00008000u, 0x00018000u, 0x3F808000u, 0x3F818000u,
                                0x3F807FFFu, 0x3F808001u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F7F8000u,
                                0x7F7F7FFFu, 0x3F800000u, 0xBF800000u, 0x00800000u};
  std::vector<float> v;
  for (std::uint32_t u : bits) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    v.push_back(f);
  }
  std::mt19937 gen(3);
  for (int i = 0; i < 1000; ++i) {  // random patterns, every exponent
    const std::uint32_t u = gen();
    float f;
    std::memcpy(&f, &u, sizeof f);
    v.push_back(f);
  }
  return v;
}

template <class S, class In, class Round>
void check_gather(int n, std::int64_t b, int steps, const Round& round) {
  const std::vector<float> values = special_floats();
  const std::int64_t rows = (steps + 1) * (b + 3);
  Matrix<S> X("X", rows, n);
  auto hX = Kokkos::create_mirror_view(X);
  for (std::int64_t i = 0; i < rows; ++i)
    for (int c = 0; c < n; ++c)
      hX(i, c) = precision::convert<S>(values[std::size_t(i * n + c) % values.size()]);
  Kokkos::deep_copy(X, hX);
  const BatchRows first = scattered_batches(steps, b);
  const Matrix<In> Y("Y", steps * b, n);
  gather_batches(X, first, b, round, 5, Y);
  const auto hY = Kokkos::create_mirror_view_and_copy(HostSpace(), Y);
  const auto hf = Kokkos::create_mirror_view_and_copy(HostSpace(), first);
  for (std::int64_t q = 0; q < steps * b; ++q)
    for (int c = 0; c < n; ++c) {
      const In want = precision::convert<In>(hX(hf(q / b) + q % b, c));
      ASSERT_TRUE(same_bits(hY(q, c), want)) << "n " << n << " row " << q << " column " << c;
    }
}

}  // namespace

// The cast the mixed preset's Gram input takes (round to nearest bf16), from fp32 and from
// bf16 storage, every length modulo the 8 values of a vector step.
TEST_P(CaSgdKernels, GatherCastsLikeConvertBitForBit) {
  const precision::RoundTo<bf16, false> to_bf16{};
  for (int n : {1, 3, 7, 8, 9, 15, 16, 17, 28, 100, 2000})
    for (std::int64_t b : {1, 5, 32}) {
      check_gather<float, bf16>(n, b, 3, to_bf16);
      check_gather<bf16, bf16>(n, b, 3, to_bf16);
      check_gather<float, float>(n, b, 2, precision::RoundTo<float, false>{});
    }
}

// The outer step's set-up kernel gives each batch's first row and the coefficients
// coef(j, i) = (η_i/b)·Π_{i<t<j} ρ_t, c_j = Π_{t<j} ρ_t, bit for bit the products in the order
// the host forms them (ρ from the right for coef, from the left for c), for every outer step
// length up to the launch's limit.
TEST(CaSgdOuterStep, SetUpGivesTheCoefficientsBitForBit) {
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> eta(0.01, 1.0), rho(0.9, 1.0);
  for (const int n : {1, 2, 7, kLaunchedSteps}) {
    SCOPED_TRACE(n);
    OuterSteps o;
    o.steps = n;
    o.b = 24;
    for (int j = 0; j < n; ++j) {
      o.batch[j] = 3 * j + 5;
      o.eta[j] = eta(gen);
      o.rho[j] = rho(gen);
    }
    const BatchRows first("first", n);
    const Coefficients k{Kokkos::View<double**, Kokkos::LayoutRight, MemSpace>("coef", n + 1, n),
                         Kokkos::View<double*, MemSpace>("scale", n + 1)};
    set_up_outer_step(o, first, k);
    const auto first_h = Kokkos::create_mirror_view_and_copy(HostSpace(), first);
    const auto coef_h = Kokkos::create_mirror_view_and_copy(HostSpace(), k.coef);
    const auto scale_h = Kokkos::create_mirror_view_and_copy(HostSpace(), k.scale);
    for (int j = 0; j < n; ++j) EXPECT_EQ(first_h(j), (3 * j + 5) * 24) << j;
    for (int j = 0; j <= n; ++j) {
      double c = 1.0;
      for (int t = 0; t < j; ++t) c = c * o.rho[t];
      EXPECT_EQ(scale_h(j), c) << j;
      for (int i = 0; i < j; ++i) {
        double between = 1.0;
        for (int t = j - 1; t > i; --t) between = between * o.rho[t];
        EXPECT_EQ(coef_h(j, i), o.eta[i] / 24.0 * between) << j << " " << i;
      }
    }
  }
}
