// Numerical edges of the compressors at the world size (run at 1, 2, 3 and 4 ranks): NaN and
// ∞ in a gradient reach the sum (never laundered into finite codes), Global-QSGD's levels
// never exceed ±L, exponential dithering has a NaN code, the NCCL combinations that need a
// 16-bit integer sum are avoided or refused, and CA-SGD's per-rank stochastic rounding errors
// add up like independent ones.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "minisgd/comm/mpi_communicator.hpp"
#include "minisgd/compress/compressor.hpp"
#include "minisgd/compress/dithering.hpp"
#include "minisgd/compress/form.hpp"
#include "minisgd/compress/global_qsgd.hpp"
#include "minisgd/compress/loco_codec.hpp"
#include "minisgd/compress/magnitude.hpp"
#include "minisgd/precision/rounder.hpp"
#include "support/test_support.hpp"

using namespace minisgd;

namespace {

constexpr std::size_t kD = 1000;

CompressionConfig method(const std::string& m, const std::string& params = "") {
  return test::deck("compression: {method: " + m + (params.empty() ? "" : ", " + params) + "}")
      .compression;
}

/// A finite gradient that differs per rank, with `bad` at element 7 of rank `bad_rank`.
Vector<float> gradient(int rank, int bad_rank, float bad) {
  Vector<float> g("g", kD);
  auto h = Kokkos::create_mirror_view(g);
  for (std::size_t i = 0; i < kD; ++i) h(i) = float(std::sin(0.37 * double(i) + 1.3 * rank));
  if (rank == bad_rank) h(7) = bad;
  Kokkos::deep_copy(g, h);
  return g;
}

bool any_non_finite(const Vector<float>& v) {
  auto h = Kokkos::create_mirror_view_and_copy(HostSpace(), v);
  for (std::size_t i = 0; i < h.extent(0); ++i)
    if (!std::isfinite(h(i))) return true;
  return false;
}

struct Case {
  const char* method;
  const char* params;
};

}  // namespace

// Every method in both forms (compress/form.hpp), a NaN (then +∞) in one rank's gradient: every
// rank's sum has a non-finite entry.
// Global-QSGD's max and LoCo's group maxima dropped NaN, and the NaN then went through an
// undefined float→int conversion into finite codes.
TEST(NonFinite, ReachesTheSumOfEveryMethod) {
  comm::MpiCommunicator training(MPI_COMM_WORLD);
  const int P = training.size(), rank = training.rank();
  const Case cases[] = {{"none", ""},
                        {"cast", ""},
                        {"topk", "topk: {density: 0.1}"},
                        {"qsgd", ""},
                        {"qsgd", "qsgd: {bits: 8, dithering: exponential}"},
                        {"global-qsgd", ""},
                        {"global-qsgd", "global-qsgd: {bits: 8, dithering: exponential}"},
                        {"global-qsgd", "global-qsgd: {bits: 16}"},
                        {"aps", ""},
                        {"gtopk", "gtopk: {density: 0.1}"},
                        {"loco", ""},
                        {"loco", "loco: {bits: 8, beta: 0}"}};
  for (const float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    for (const Case& c : cases)
      for (const compress::Form form : compress::runnable_forms()) {
        auto comp =
            compress::make_compressor<float>(method(c.method, c.params), 5, kD, training, form);
        Vector<float> sum("sum", kD);
        comp->reduce(gradient(rank, P - 1, bad), sum);
        EXPECT_TRUE(any_non_finite(sum))
            << c.method << " " << c.params << " (" << compress::to_string(form) << " form) with "
            << bad << " on rank " << P - 1 << ", seen by rank " << rank;
      }
  }
}

// g·fl(L/M) can exceed L by an ulp at g = M; with the random draw that rounds up (0: up
// whenever the fraction is positive) the level must stay L. The test finds such an M itself.
TEST(GlobalQsgdLevels, NeverExceedL) {
  int found = 0;
  for (const int L : {1, 31, 127, 16383}) {
    for (int k = 1; k < 100000 && found < 4 * 50; ++k) {
      const double M = 1.0 + k * 0x1p-20;
      const double y = M * (double(L) / M);
      if (y <= L) continue;
      ++found;
      EXPECT_EQ(compress::stochastic_level(y, L, 0u), L) << "L " << L << " M " << M;
      EXPECT_EQ(compress::stochastic_level(-y, L, 0u), -L) << "L " << L << " M " << M;
      EXPECT_EQ(compress::stochastic_level(-y, L, 0xFFFFFFFFu), -L) << "L " << L << " M " << M;
      if (found % 50 == 0) break;
    }
  }
  EXPECT_GT(found, 0) << "no M with M·fl(L/M) > L found: the test checks nothing";
  EXPECT_EQ(compress::stochastic_level(std::nan(""), 127, 0u), 0);
}

// Exponential dithering: NaN and ∞ encode to the NaN code, which decodes to NaN and wins
// every merge (it used to become byte 0x00 or 0xFF, i.e. ±1 or zero).
TEST(ExponentialDithering, KeepsNaN) {
  namespace ed = compress::exp_dither;
  for (const double bad : {std::nan(""), -std::nan(""), HUGE_VAL, -HUGE_VAL}) {
    for (const std::uint32_t r : {0u, 0x80000000u, 0xFFFFFFFFu}) {
      const std::uint8_t c = ed::encode(bad, r);
      EXPECT_TRUE(std::isnan(ed::decode(c))) << bad << " gave code " << int(c);
      EXPECT_TRUE(std::isnan(ed::decode(ed::merge(c, ed::encode(0.25, r), r, r))));
      EXPECT_TRUE(std::isnan(ed::decode(ed::merge(ed::encode(-0.25, r), c, r, r))));
      EXPECT_TRUE(std::isnan(ed::decode(ed::merge(c, ed::zero, r, r))));
    }
  }
  EXPECT_EQ(ed::decode(ed::encode(0.0, 0)), 0.0f);
  EXPECT_EQ(ed::decode(ed::encode(0.5, 0)), 0.5f);
}

// LoCo's codec: a group whose step is +∞ (it held a NaN or ∞) quantizes to 0 and decodes to
// NaN; an error that is not finite gets code 0 (no undefined conversion).
TEST(LocoCodec, NonFiniteGroupDecodesToNaN) {
  namespace lc = compress::loco;
  const float nan = std::nanf("");
  const float step = compress::max_magnitude_of(&nan, 1) / 8;  // NaN as +∞
  EXPECT_EQ(step, HUGE_VALF);
  EXPECT_EQ(lc::quantize(std::nanf(""), step, 8), 0);
  EXPECT_EQ(lc::quantize(HUGE_VALF, step, 8), 0);
  EXPECT_EQ(lc::quantize(std::nanf(""), 0.5f, 8), 0);
  EXPECT_TRUE(std::isnan(lc::dequantize(lc::quantize(1.0f, step, 8), step)));
  EXPECT_EQ(lc::error_code(std::nanf(""), 1.0f), 0);
  EXPECT_EQ(lc::error_code(1.0f, HUGE_VALF), 0);
  EXPECT_EQ(lc::error_code(-127.0f, 1.0f), -127);
}

// Global-QSGD's codes are the narrowest integers that hold P·L, on any backend (it sums them
// itself); APS (int16 exponents through the library's AllReduce) on NCCL, which sums no 16-bit
// integers, is refused when the deck is read.
TEST(NcclTypes, AvoidedOrRefused) {
  EXPECT_EQ(compress::GlobalLevels::of(16, 2).code_bytes, 2);
  EXPECT_EQ(compress::GlobalLevels::of(8, 200).code_bytes, 2);
  EXPECT_EQ(compress::GlobalLevels::of(8, 4).code_bytes, 1);
  EXPECT_EQ(compress::GlobalLevels::of(16, 70000).code_bytes, 4);
  const std::string e = test::deck_error("compression: {method: aps}\ncomm: {backend: nccl}");
  EXPECT_NE(e.find("comm.backend: nccl cannot carry compression.method: aps"), std::string::npos)
      << e;
}

// Widths that would not send fewer bytes are refused, naming the key and line.
TEST(SubByteWidths, AreRefused) {
  for (const int bits : {2, 3, 5, 6, 7}) {
    const std::string e =
        test::deck_error("compression:\n  loco: {bits: " + std::to_string(bits) + "}");
    EXPECT_NE(e.find("test-deck:2: compression.loco.bits: codes are packed"), std::string::npos)
        << e;
  }
  for (const int bits : {2, 4, 7}) {
    const std::string e =
        test::deck_error("compression:\n  global-qsgd: {bits: " + std::to_string(bits) + "}");
    EXPECT_NE(e.find("test-deck:2: compression.global-qsgd.bits:"), std::string::npos) << e;
  }
  EXPECT_EQ(test::deck_error("compression: {loco: {bits: 8}, global-qsgd: {bits: 12}}"),
            "no error");
}

// CA-SGD's ranks round different partial sums that are then added: with one seed per rank the
// rounding errors are independent, so Var(Σ_p e_p) ≈ P·Var(e). The worst case for shared bits
// is every rank rounding the same values (errors identical: variance P²·Var(e)).
TEST(CaSgdRounding, ErrorsOfRanksAreIndependent) {
  comm::MpiCommunicator mpi(MPI_COMM_WORLD);
  comm::Communicator& world = mpi;
  const int P = world.size();
  if (P == 1) GTEST_SKIP() << "one rank: nothing to correlate";
  const auto r = precision::Rounder::to(precision::parse_format("bf16"), precision::Format::fp64,
                                        true, precision::rank_seed(1234, world.rank()));
  const int n = 20000;
  std::vector<double> e(n);
  double own_var = 0;
  for (int i = 0; i < n; ++i) {
    const double x = 1.0 + (i + 0.5) / n;  // one binade: bf16 step 2^-7
    e[i] = r(x, 3, i) - x;
    own_var += e[i] * e[i] / n;
  }
  world.allreduce(e.data(), n);
  own_var = world.allreduce_value(own_var) / P;
  double sum_var = 0;
  for (const double s : e) sum_var += s * s / n;
  // Independent: ratio 1 ± a few %; shared bits: ratio P.
  EXPECT_NEAR(sum_var / (P * own_var), 1.0, 0.15) << "P " << P;
}
