// The arithmetic of the compressors in one process, for simulated rank counts up to 64: the
// merge schedule, APS scaling, Global-QSGD levels, both ditherings and LoCo's compensation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include "minisgd/compress/aps_codec.hpp"
#include "minisgd/compress/dithering.hpp"
#include "minisgd/compress/global_qsgd.hpp"
#include "minisgd/compress/loco_codec.hpp"
#include "support/aps_reference.hpp"
#include "support/simulated_merge.hpp"

using namespace minisgd;
using comm::MergeShape;
namespace aps = compress::aps;

namespace {

using Buffers = std::vector<std::vector<std::uint8_t>>;

/// Integer payloads summed by the simulated schedule: every rank must end with the exact sum.
void expect_exact_integer_sum(int P, MergeShape shape, std::size_t n,
                              comm::MergeSchedule schedule) {
  Buffers data(P, std::vector<std::uint8_t>(n * sizeof(std::int64_t)));
  std::vector<std::int64_t> expect(n, 0);
  for (int r = 0; r < P; ++r) {
    auto* v = reinterpret_cast<std::int64_t*>(data[r].data());
    for (std::size_t i = 0; i < n; ++i) expect[i] += v[i] = std::int64_t(1000 * r + i * (r + 3));
  }
  test::simulate_merge_allreduce(
      shape, data, sizeof(std::int64_t),
      [](std::uint8_t* own, const std::uint8_t* received, std::size_t, std::size_t m,
         const comm::PlanStep&) {
        auto* a = reinterpret_cast<std::int64_t*>(own);
        const auto* b = reinterpret_cast<const std::int64_t*>(received);
        for (std::size_t i = 0; i < m; ++i) a[i] += b[i];
      },
      &schedule);
  for (int r = 0; r < P; ++r)
    ASSERT_EQ(0, std::memcmp(data[r].data(), expect.data(), n * sizeof(std::int64_t)))
        << "P " << P << " rank " << r;
}

constexpr comm::MergeSchedule kHalving = comm::MergeSchedule::halving;
constexpr comm::MergeSchedule kShifted = comm::MergeSchedule::shifted_trees;

}  // namespace

// Both schedules are exact for an exact merge, for any P and any length (even n < P).
TEST(MergePlan, IntegerSumsAreExactForAnyRankCount) {
  for (int P = 1; P <= 64; ++P)
    for (const std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(100)}) {
      expect_exact_integer_sum(P, MergeShape::elementwise, n, kHalving);
      expect_exact_integer_sum(P, MergeShape::elementwise, n, kShifted);
      expect_exact_integer_sum(P, MergeShape::whole, n, kHalving);
    }
}

// Halving: core ranks send 2(p2−1)/p2·n elements in reduce-scatter + allgather, n per round in
// recursive doubling, plus n for a rank that serves a folded-in one. Shifted trees: every rank
// sends and receives 2(P−1)/P·n at any P, in 2⌈log2 P⌉ messages.
TEST(MergePlan, SentElementsMatchTheFormula) {
  for (int P = 1; P <= 64; ++P) {
    const int p2 = comm::fold_in_size(P);
    const std::size_t n = 37 * std::size_t(P) * std::size_t(p2);  // divisible by P and p2
    for (int r = 0; r < P; ++r) {
      for (const MergeShape shape : {MergeShape::elementwise, MergeShape::whole}) {
        std::size_t sent = 0;
        for (const auto& s : comm::make_merge_plan(P, r, n, shape).steps)
          sent += comm::element_count(s.send);
        const std::size_t core =
            shape == MergeShape::whole ? n * comm::ceil_log2(p2) : 2 * (p2 - 1) * n / p2;
        const std::size_t expect = r >= p2 ? n : core + (r + p2 < P ? n : 0);
        EXPECT_EQ(sent, expect) << "P " << P << " rank " << r;
      }
      const auto plan = comm::make_merge_plan(P, r, n, MergeShape::elementwise, kShifted);
      std::size_t sent = 0, received = 0;
      for (const auto& s : plan.steps) {
        sent += comm::element_count(s.send);
        received += comm::element_count(s.recv);
      }
      EXPECT_EQ(sent, 2 * std::size_t(P - 1) * n / P) << "P " << P << " rank " << r;
      EXPECT_EQ(received, sent) << "P " << P << " rank " << r;
      EXPECT_EQ(plan.steps.size(), std::size_t(2 * comm::ceil_log2(P))) << "P " << P;
    }
  }
}

// Every element is merged over a balanced tree: depth ⌈log2 P⌉ in both schedules (what keeps
// the range bound of exponential dithering), with each rank's contribution merged once.
TEST(MergePlan, MergeTreesAreBalanced) {
  for (int P = 1; P <= 64; ++P)
    for (const comm::MergeSchedule schedule : {kHalving, kShifted}) {
      const std::size_t n = 3 * std::size_t(P) + 1;
      // element = (depth, leaves) in two uint32
      Buffers data(P, std::vector<std::uint8_t>(n * 8));
      for (int r = 0; r < P; ++r)
        for (std::size_t i = 0; i < n; ++i) {
          const std::uint32_t leaf[2] = {0, 1};
          std::memcpy(&data[r][8 * i], leaf, 8);
        }
      test::simulate_merge_allreduce(
          MergeShape::elementwise, data, 8,
          [](std::uint8_t* own, const std::uint8_t* received, std::size_t, std::size_t m,
             const comm::PlanStep&) {
            for (std::size_t i = 0; i < m; ++i) {
              std::uint32_t a[2], b[2];
              std::memcpy(a, own + 8 * i, 8);
              std::memcpy(b, received + 8 * i, 8);
              const std::uint32_t out[2] = {std::max(a[0], b[0]) + 1, a[1] + b[1]};
              std::memcpy(own + 8 * i, out, 8);
            }
          },
          &schedule);
      for (int r = 0; r < P; ++r)
        for (std::size_t i = 0; i < n; ++i) {
          std::uint32_t e[2];
          std::memcpy(e, &data[r][8 * i], 8);
          ASSERT_EQ(e[1], std::uint32_t(P)) << "P " << P << " rank " << r << " element " << i;
          ASSERT_EQ(e[0], std::uint32_t(comm::ceil_log2(P)))
              << "P " << P << " rank " << r << " element " << i;
        }
    }
}

// The elements merged on the critical path (every stage's busiest rank, stages in turn) are
// what schedule_time prices: halving (p2−1)/p2·n, plus n for a fold-in; a whole merge n per
// round; shifted trees (P−1)/P·n.
TEST(MergePlan, MergedElementsMatchTheScheduleTime) {
  for (int P = 1; P <= 33; ++P) {
    const int p2 = comm::fold_in_size(P);
    const std::size_t n = 5 * std::size_t(P) * std::size_t(p2);  // divisible by P and p2
    for (const auto& [shape, schedule] :
         {std::pair{MergeShape::elementwise, kHalving},
          std::pair{MergeShape::elementwise, kShifted}, std::pair{MergeShape::whole, kHalving}}) {
      std::map<int, std::vector<std::size_t>> merged;  // stage → elements merged by each rank
      for (int r = 0; r < P; ++r)
        for (const comm::PlanStep& step : comm::make_merge_plan(P, r, n, shape, schedule).steps)
          if (step.merges()) {
            auto& stage = merged[step.stage];
            stage.resize(P);
            stage[r] += comm::element_count(step.recv);
          }
      double critical = 0;
      for (const auto& [stage, ranks] : merged)
        critical += double(*std::max_element(ranks.begin(), ranks.end()));
      EXPECT_DOUBLE_EQ(comm::schedule_time(schedule, shape, P, double(n), 1, {}).merged, critical)
          << "P " << P << (shape == MergeShape::whole ? " whole" : " elementwise")
          << (schedule == kShifted ? " shifted trees" : " halving");
    }
  }
}

// Shifted trees where they are cheaper: elementwise merges at P ≠ 2^k. Halving at P = 2^k
// (same cost, contiguous halves) and for whole-payload merges.
TEST(MergePlan, ChoosesShiftedTreesOnlyOffPowersOfTwo) {
  for (int P = 1; P <= 64; ++P) {
    const bool pow2 = (P & (P - 1)) == 0;
    for (const std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(1) << 24}) {
      EXPECT_EQ(comm::choose_schedule(MergeShape::elementwise, P, n, 1), pow2 ? kHalving : kShifted)
          << "P " << P << " n " << n;
      EXPECT_EQ(comm::choose_schedule(MergeShape::whole, P, n, 1), kHalving);
    }
  }
}

namespace {

struct ApsCase {
  const char* format;
  precision::CustomFormat f;
};

/// The sum over P simulated ranks of one APS block, encoded, merged and decoded exactly as the
/// compressor does; `overflowed` is set when any decoded value is not finite.
std::vector<double> aps_sum(const std::vector<std::vector<float>>& g, precision::CustomFormat f,
                            bool kahan, bool& overflowed) {
  return test::aps_reference_sum(g, g[0].size(), f, kahan, &overflowed);
}

const ApsCase kApsFormats[] = {
    {"e5m2", {5, 2}}, {"e4m3", {4, 3}}, {"e3m0", {3, 0}}, {"fp16", {5, 10}}, {"bf16", {8, 7}}};

}  // namespace

TEST(Aps, WireFormatsOfTheDeck) {
  EXPECT_EQ(aps::wire_format("e5m2").bits(), 8);
  EXPECT_EQ(aps::wire_format("e4m3").max_value(), 240.0f);  // IEEE-style, not 448
  EXPECT_EQ(aps::wire_format("e3m0").bits(), 4);
  EXPECT_EQ(aps::Packing::of(aps::wire_format("e3m0"), false).per_word, 2);
  EXPECT_THROW(aps::wire_format("fp32"), std::invalid_argument);
  EXPECT_THROW(aps::wire_format("e2m13"), std::invalid_argument);
}

// The headroom bound: no extra bit at power-of-two P; in E5M2 one bit exactly where the rounded
// leaf bound times 2^⌈log2 P⌉ would pass 57344 (P = 17, 33, 34 up to 64).
TEST(Aps, HeadroomOnlyWhereTheBoundNeedsIt) {
  for (int P = 1; P <= 64; ++P) {
    EXPECT_EQ(aps::headroom_bits({5, 2}, P), (P == 17 || P == 33 || P == 34) ? 1 : 0) << P;
    if ((P & (P - 1)) == 0) {
      for (const ApsCase& c : kApsFormats) EXPECT_EQ(aps::headroom_bits(c.f, P), 0) << c.format;
    }
  }
}

// Worst case for monotone rounding: every rank holds the block maximum with the same sign, at
// magnitudes from 1e-30 to 1e30. No partial sum may overflow for any P up to 64.
TEST(Aps, NeverOverflowsUpTo64Ranks) {
  for (const ApsCase& c : kApsFormats) {
    for (int P = 1; P <= 64; ++P) {
      for (const float magnitude : {1e-30f, 3.0e-5f, 1.0f, 7.77e12f, 1e30f}) {
        for (const bool kahan : {false, true}) {
          const std::vector<std::vector<float>> g(
              P, std::vector<float>{magnitude, -magnitude, magnitude});
          bool overflowed = false;
          const std::vector<double> s = aps_sum(g, c.f, kahan, overflowed);
          ASSERT_FALSE(overflowed) << c.format << " P " << P << " magnitude " << magnitude;
          // P equal values rounded once, then ⌈log2 P⌉ + 1 rounded partial sums. (E3M0's
          // leaves underflow beyond a few ranks: only its overflow is checked.)
          if (c.f.E >= 4) {
            EXPECT_NEAR(s[0], double(P) * magnitude,
                        (comm::ceil_log2(P) + 2) * c.f.unit_roundoff() * P * magnitude)
                << c.format << " P " << P;
          }
        }
      }
    }
  }
}

// Values whose every partial sum is representable come back exactly: the power-of-two
// scaling and unscaling add no error (P ranks holding ±2^k; n·2^k is exact for n ≤ 4 with
// M ≥ 1, and for powers of two n with M = 0).
TEST(Aps, UnscalesExactly) {
  for (const ApsCase& c : kApsFormats) {
    // E3M0 spans 2^−2..2^3: with more than 4 ranks a leaf (≤ 8/P) falls below its range.
    const bool narrow = c.f.E == 3;
    for (const int P : {1, 2, 3, 4, 8, 16, 64}) {
      if (narrow && (P > 4 || P == 3)) continue;
      std::vector<float> v;
      for (int k = narrow ? -1 : -4; k <= 0; ++k)
        v.push_back((k % 2 ? -1.0f : 1.0f) * std::ldexp(1.0f, k + 40));
      const std::vector<std::vector<float>> g(P, v);
      bool overflowed = false;
      const std::vector<double> s = aps_sum(g, c.f, false, overflowed);
      for (std::size_t i = 0; i < v.size(); ++i)
        EXPECT_EQ(s[i], double(P) * v[i]) << c.format << " P " << P << " i " << i;
    }
  }
}

// Random gradients: the low-precision sum stays within the error of ⌈log2 P⌉+2 roundings.
TEST(Aps, RandomSumsAreAccurate) {
  std::mt19937 gen(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const int P : {3, 4, 17, 64}) {
    std::vector<std::vector<float>> g(P, std::vector<float>(200));
    double scale = 0;
    for (auto& v : g)
      for (float& x : v) scale = std::fmax(scale, std::fabs(x = 1e-3f * normal(gen)));
    bool overflowed = false;
    const std::vector<double> s = aps_sum(g, {5, 10}, false, overflowed);  // fp16-like: tight
    for (std::size_t i = 0; i < s.size(); ++i) {
      double exact = 0;
      for (const auto& v : g) exact += v[i];
      EXPECT_NEAR(s[i], exact, (comm::ceil_log2(P) + 2) * 0x1p-11 * 2 * P * scale);
    }
  }
}

// The Kahan path's benefit: positive values whose running sums outgrow the 2 fraction bits of
// E5M2, so every merge drops bits. With the compensation lane the error of the sum must be
// far below the plain sum's, and below the error of a single final rounding of the exact sum
// to E5M2 (the best an 8-bit sum lane alone could do). Measured rms errors (gradient units,
// values in [0.5, 1) per rank): P = 7: 0.0096 with, 0.44 without; P = 64: 0.11 with, 1.25
// without, 1.24 for one rounding.
TEST(Aps, KahanCompensationMakesTheSumMoreAccurate) {
  const precision::CustomFormat f{5, 2};
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> uniform(0.5f, 1.0f);
  for (const int P : {4, 7, 16, 64}) {
    std::vector<std::vector<float>> g(P, std::vector<float>(512));
    for (auto& v : g)
      for (float& x : v) x = uniform(gen);
    bool overflowed = false;
    const std::vector<double> plain = aps_sum(g, f, false, overflowed);
    ASSERT_FALSE(overflowed);
    const std::vector<double> kahan = aps_sum(g, f, true, overflowed);
    ASSERT_FALSE(overflowed);
    // Error of the sum of what the ranks sent (each leaf rounded once to the format, in the
    // block's scale, which both paths share): the part a compensated merge can recover.
    float block_max = 0;
    for (const auto& v : g)
      for (float x : v) block_max = std::fmax(block_max, x);
    const int shift =
        aps::block_shift(f, aps::headroom_bits(f, P), aps::block_exponent(block_max, P));
    double e_plain = 0, e_kahan = 0, e_once = 0;
    for (std::size_t i = 0; i < plain.size(); ++i) {
      double sent = 0;
      for (const auto& v : g)
        sent += aps::unscale(precision::decode(aps::encode_scaled(v[i], shift, f), f), shift);
      const double once =
          aps::unscale(precision::round_to(float(std::ldexp(sent, shift)), f), shift);
      e_plain += (plain[i] - sent) * (plain[i] - sent);
      e_kahan += (kahan[i] - sent) * (kahan[i] - sent);
      e_once += (once - sent) * (once - sent);
    }
    EXPECT_LT(e_kahan, 0.05 * e_plain) << "P " << P << ": rms " << std::sqrt(e_kahan / 512)
                                       << " with, " << std::sqrt(e_plain / 512) << " without";
    EXPECT_LT(e_kahan, e_once) << "P " << P << ": rms " << std::sqrt(e_kahan / 512) << " with, "
                               << std::sqrt(e_once / 512) << " for one rounding";
  }
}

// |Σq| ≤ P·L must fit the code type for every bit width and P = 1..64; the codes of the
// extreme values ±M are exactly ±L, so the worst-case sum is ±P·L.
TEST(GlobalQsgd, IntegerSumsCannotOverflow) {
  for (int bits = 2; bits <= 16; ++bits)
    for (int P = 1; P <= 64; ++P) {
      const compress::GlobalLevels l = compress::GlobalLevels::of(bits, P);
      const long long limit = l.code_bytes == 1 ? 127 : l.code_bytes == 2 ? 32767 : 2147483647;
      EXPECT_GE(l.levels, 1);
      EXPECT_LE(1ll * P * l.levels, limit) << "bits " << bits << " P " << P;
      if (bits == 8 && P <= 127) {
        EXPECT_EQ(l.code_bytes, 1);
      }
      EXPECT_EQ(compress::stochastic_round(double(l.levels), 0xFFFFFFFFu), double(l.levels));
    }
  EXPECT_EQ(compress::GlobalLevels::of(8, 4).levels, 31);  // 127/4 would give 4·32 = 128 > 127
}

// Standard dithering: the mean of 200 000 fixed-seed roundings of y is within 5σ of y
// (σ ≤ ½/√N).
TEST(Dithering, StandardIsUnbiased) {
  const int N = 200000;
  for (const double y : {-2.7, -0.5, 0.0, 0.3, 5.999}) {
    double sum = 0;
    for (int t = 0; t < N; ++t) sum += compress::stochastic_round(y, precision::sr_bits(11, 0, t));
    EXPECT_NEAR(sum / N, y, 5 * 0.5 / std::sqrt(double(N))) << y;
  }
}

// Exponential dithering of a value and the pairwise merge in the compressed domain: means of
// 200 000 fixed-seed trials within 5σ, σ ≤ (spacing of the two outcomes)/(2√N).
TEST(Dithering, ExponentialEncodeAndPairwiseMergeAreUnbiased) {
  namespace ed = compress::exp_dither;
  const int N = 200000;
  const double tol = 5 / (2 * std::sqrt(double(N)));
  for (const double y : {0.5, 0.3, -0.123, 1e-3, -3.3e-20, 1e-39}) {
    double sum = 0;
    for (int t = 0; t < N; ++t) sum += ed::decode(ed::encode(y, precision::sr_bits(5, 0, t)));
    // The two outcomes are 2^(e−1) apart (or 0 and 2^−126 below the smallest power).
    const double spacing = std::fmax(std::ldexp(1.0, std::ilogb(std::fabs(y))), 0x1p-126);
    EXPECT_NEAR(sum / N, y, tol * spacing) << y;
  }
  const std::uint8_t codes[] = {
      ed::code(false, 1), ed::code(false, 2),   ed::code(true, 2),   ed::code(false, 5),
      ed::code(true, 9),  ed::code(false, 126), ed::code(true, 125), ed::zero};
  for (const std::uint8_t a : codes)
    for (const std::uint8_t b : codes) {
      const double exact = double(ed::decode(a)) + ed::decode(b);
      double sum = 0;
      for (int t = 0; t < N; ++t) {
        const std::uint8_t m =
            ed::merge(a, b, precision::sr_bits(9, 1, 2 * t), precision::sr_bits(9, 1, 2 * t + 1));
        EXPECT_EQ(m, ed::merge(b, a, precision::sr_bits(9, 1, 2 * t),
                               precision::sr_bits(9, 1, 2 * t + 1)));
        sum += ed::decode(m);
        if (HasFailure()) return;
      }
      const double spacing =
          std::fmax(std::fabs(double(ed::decode(a))), std::fabs(double(ed::decode(b))));
      EXPECT_NEAR(sum / N, exact, tol * spacing) << int(a) << " + " << int(b);
    }
}

// Pre-scaled by 2PM, leaves are ≤ 1/(2P), so no merge tree of the schedule can reach a value
// above 1 (code −1): worst case, every rank at the maximum with one sign, P = 1..64.
TEST(Dithering, ExponentialMergeTreeStaysInRange) {
  namespace ed = compress::exp_dither;
  for (int P = 1; P <= 64; ++P) {
    Buffers data(P, std::vector<std::uint8_t>(32));
    for (int r = 0; r < P; ++r)
      for (std::size_t i = 0; i < 32; ++i)
        data[r][i] = ed::encode(1.0 / (2 * P), precision::sr_bits(1, r, i));
    test::simulate_merge_allreduce(
        MergeShape::elementwise, data, 1,
        [](std::uint8_t* own, const std::uint8_t* received, std::size_t first, std::size_t m,
           const comm::PlanStep& s) {
          for (std::size_t i = 0; i < m; ++i) {
            const std::uint64_t key = 1000 * std::uint64_t(s.round) + std::uint64_t(s.merge_id);
            own[i] = ed::merge(own[i], received[i], precision::sr_bits(key, 0, first + i),
                               precision::sr_bits(key, 1, first + i));
            ASSERT_LE(ed::decode(own[i]), 1.0f);
            ASSERT_FALSE(ed::negative(own[i]));
          }
        });
  }
}

// With β = 0 the compensation error is exactly what quantization dropped: v = deQ(q) + e_new
// bit for bit, for random groups of magnitudes spread over many binades.
TEST(Loco, ZeroBetaCompensationIsExact) {
  namespace lc = compress::loco;
  std::mt19937 gen(17);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-30, 30);
  for (const int bits : {2, 4, 8}) {
    const int L = 1 << (bits - 1);
    for (int trial = 0; trial < 2000; ++trial) {
      std::vector<float> v(64);
      float vmax = 0;
      for (float& x : v)
        vmax = std::fmax(vmax, std::fabs(x = std::ldexp(normal(gen), exponent(gen) / 3)));
      const float step = vmax / float(L);
      for (const float x : v) {
        const int q = lc::quantize(x, step, L);
        ASSERT_GE(q, -L);
        ASSERT_LE(q, L - 1);
        const float deq = lc::dequantize(q, step);
        const float e_new = lc::compensate(0.0f, 123.0f, x, deq);
        ASSERT_EQ(deq + e_new, x) << "bits " << bits << " x " << x << " step " << step;
      }
    }
  }
}

TEST(Loco, ChunkLayoutPacksSignedCodes) {
  const compress::loco::ChunkLayout L = compress::loco::ChunkLayout::of(5, 4, 4);
  EXPECT_EQ(L.groups, 2u);
  EXPECT_EQ(L.bytes, 12u);  // 2 steps (8 bytes) + 3 bytes of codes, padded to 4
  std::vector<std::uint8_t> chunk(L.bytes, 0);
  L.set_step(chunk.data(), 1, 0.375f);
  L.set_codes(chunk.data(), 0, -8, 7);
  L.set_codes(chunk.data(), 4, -1, 0);
  EXPECT_EQ(L.code(chunk.data(), 0), -8);
  EXPECT_EQ(L.code(chunk.data(), 1), 7);
  EXPECT_EQ(L.code(chunk.data(), 4), -1);
  EXPECT_EQ(L.value(chunk.data(), 1, 4), -0.375f);  // value 4 is in group 1
}
