// Low-precision formats, rounding and format names, checked against known values
// (hand-derived or from the format specifications), independent reference
// conversions, and exhaustive code round trips.

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "minisgd/precision/format_spec.hpp"
#include "minisgd/precision/storage_types.hpp"

using namespace minisgd::precision;

namespace {

const float inf = INFINITY;
const float nan_ = NAN;

uint16_t bf(float x) { return from_float<bf16>(x).bits; }
uint16_t hf(float x) { return from_float<fp16>(x).bits; }
uint8_t e5(float x) { return from_float<fp8_e5m2>(x).bits; }
uint8_t e4(float x) { return from_float<fp8_e4m3>(x).bits; }

// Same float including the sign of zero; any NaN equals any NaN.
bool same(float a, float b) { return (std::isnan(a) && std::isnan(b)) || to_bits(a) == to_bits(b); }

constexpr CustomFormat E5M2{5, 2}, E4M3{4, 3}, E3M0{3, 0}, E8M7{8, 7}, E5M10{5, 10};

// The general encoder (unpack, round at a position worked out per value), which `encode` skips
// for formats with E ≤ 7.
uint32_t general(float x, CustomFormat f) { return detail::encode(detail::unpack(x), f, false, 0); }

}  // namespace

TEST(Bf16, KnownBits) {
  EXPECT_EQ(bf(1.0f), 0x3F80);
  EXPECT_EQ(bf(-2.0f), 0xC000);
  EXPECT_EQ(bf(0.0f), 0x0000);
  EXPECT_EQ(bf(-0.0f), 0x8000);
  EXPECT_EQ(bf(inf), 0x7F80);
  EXPECT_EQ(bf(-inf), 0xFF80);
  EXPECT_TRUE(std::isnan(to_float(from_float<bf16>(nan_))));
  EXPECT_EQ(to_float(bf16{0x3F80}), 1.0f);
  EXPECT_EQ(to_float(bf16{0x7F7F}), 0x1.FEp127f);  // max = (2 - 2^-7) * 2^127
  EXPECT_EQ(to_float(bf16{0x0001}), 0x1p-133f);    // smallest subnormal
  EXPECT_EQ(bf(0x1p-133f), 0x0001);
  EXPECT_EQ(bf(FLT_MAX), 0x7F80);  // beyond max + half ulp = (2 - 2^-8) * 2^127
}

TEST(Bf16, RoundsTiesToEven) {
  EXPECT_EQ(bf(1.0f + 0x1p-8f), 0x3F80);             // halfway 1 | 1+2^-7: even is 1
  EXPECT_EQ(bf(1.0f + 3 * 0x1p-8f), 0x3F82);         // halfway 1+2^-7 | 1+2^-6: even 1+2^-6
  EXPECT_EQ(bf(1.0f + 5 * 0x1p-8f), 0x3F82);         // halfway 1+2^-6 | 1+3*2^-7: even 1+2^-6
  EXPECT_EQ(bf(1.0f + 0x1p-8f + 0x1p-20f), 0x3F81);  // just above the tie
  EXPECT_EQ(bf(-(1.0f + 0x1p-8f)), 0xBF80);
}

// Independent reference: the usual integer rounding of the top 16 bits of a float.
TEST(Bf16, MatchesIntegerRoundingReference) {
  for (uint64_t i = 0; i < (1ull << 32); i += 251) {
    const uint32_t u = uint32_t(i);
    const float x = float_from_bits(u);
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(to_float(from_float<bf16>(x))));
      continue;
    }
    const uint16_t ref = uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
    ASSERT_EQ(bf(x), ref) << std::hex << u;
  }
}

TEST(Fp16, KnownBits) {
  EXPECT_EQ(hf(1.0f), 0x3C00);
  EXPECT_EQ(hf(-2.0f), 0xC000);
  EXPECT_EQ(hf(-0.0f), 0x8000);
  EXPECT_EQ(hf(1.0f / 3.0f), 0x3555);
  EXPECT_EQ(hf(0.1f), 0x2E66);
  EXPECT_EQ(to_float(fp16{0x7BFF}), 65504.0f);
  EXPECT_EQ(hf(65504.0f), 0x7BFF);
  EXPECT_EQ(hf(65519.0f), 0x7BFF);
  EXPECT_EQ(hf(65520.0f), 0x7C00);  // max + half ulp: tie to the even code, which is inf
  EXPECT_EQ(hf(-1e6f), 0xFC00);
  EXPECT_EQ(hf(0x1p-14f), 0x0400);  // min normal
  EXPECT_EQ(to_float(fp16{0x0001}), 0x1p-24f);
  EXPECT_EQ(hf(0x1p-24f), 0x0001);
  EXPECT_EQ(hf(0x1p-25f), 0x0000);  // tie with 0: even
  EXPECT_EQ(hf(0x1.8p-25f), 0x0001);
  EXPECT_EQ(hf(3 * 0x1p-25f), 0x0002);  // tie 1 | 2 (units of 2^-24): even
  EXPECT_TRUE(std::isinf(to_float(fp16{0x7C00})));
  EXPECT_TRUE(std::isnan(to_float(fp16{0x7E00})));
  EXPECT_TRUE(std::isnan(to_float(from_float<fp16>(nan_))));
}

// Every fp16 code widened to float, against the value the format defines: (−1)^s·2^(e−15)·
// (1 + f/1024), subnormals 2^−14·f/1024, inf, and NaN quiet with its sign and payload (the
// IEEE conversion, and what F16C does). Bit for bit, zeros' signs and NaN payloads included.
TEST(Fp16, WidensEveryCodeExactly) {
  for (uint32_t c = 0; c < 65536; ++c) {
    const uint32_t sign = c >> 15, e = (c >> 10) & 0x1F, f = c & 0x3FF;
    uint32_t expected;
    if (e == 31)
      expected = (sign << 31) | 0x7F800000u | (f ? 0x400000u | (f << 13) : 0u);
    else
      expected = to_bits(float(std::ldexp(e ? 1024.0 + f : double(f), e ? int(e) - 25 : -24) *
                               (sign ? -1.0 : 1.0)));
    ASSERT_EQ(to_bits(to_float(fp16{uint16_t(c)})), expected) << std::hex << "code " << c;
    ASSERT_EQ(to_bits(convert<float>(fp16{uint16_t(c)})), expected) << std::hex << "code " << c;
    ASSERT_EQ(to_bits(float(convert<double>(fp16{uint16_t(c)}))), expected)
        << std::hex << "code " << c;
  }
}

#ifdef __FLT16_MANT_DIG__
// Independent reference: the compiler's own _Float16 conversions (IEEE, RNE), from
// float and directly from double.
TEST(Fp16, MatchesCompilerFloat16) {
  const auto bits16 = [](_Float16 h) {
    uint16_t u;
    std::memcpy(&u, &h, 2);
    return u;
  };
  for (uint64_t i = 0; i < (1ull << 32); i += 997) {
    const float x = float_from_bits(uint32_t(i));
    if (std::isnan(x)) continue;
    ASSERT_EQ(hf(x), bits16(_Float16(x))) << std::hexfloat << x;
    const double d = double(x) * (1.0 + 0x1p-30);  // bits below float precision
    ASSERT_EQ(convert<fp16>(d).bits, bits16(_Float16(d))) << std::hexfloat << d;
  }
  // and widening: every code, NaN payloads included (the compiler quiets them too).
  for (uint32_t c = 0; c < 65536; ++c) {
    _Float16 h;
    const uint16_t code = uint16_t(c);
    std::memcpy(&h, &code, 2);
    ASSERT_EQ(to_bits(to_float(fp16{code})), to_bits(float(h))) << std::hex << "code " << c;
  }
}
#endif

TEST(Fp8E5M2, KnownValues) {
  EXPECT_EQ(to_float(fp8_e5m2{0x7B}), 57344.0f);  // max = 1.75 * 2^15
  EXPECT_EQ(e5(57344.0f), 0x7B);
  EXPECT_EQ(e5(61439.0f), 0x7B);  // below max + half ulp (61440)
  EXPECT_EQ(e5(61440.0f), 0x7C);  // tie to the even code: inf
  EXPECT_EQ(e5(-1e6f), 0xFC);
  EXPECT_EQ(e5(inf), 0x7C);
  EXPECT_EQ(to_float(from_float<fp8_e5m2>(1.3f)), 1.25f);
  EXPECT_EQ(to_float(from_float<fp8_e5m2>(0.1f)), 0.09375f);
  EXPECT_EQ(to_float(fp8_e5m2{0x01}), 0x1p-16f);  // smallest subnormal
  EXPECT_EQ(to_float(fp8_e5m2{0x04}), 0x1p-14f);  // min normal
  EXPECT_TRUE(std::isinf(to_float(fp8_e5m2{0xFC})) && to_float(fp8_e5m2{0xFC}) < 0);
  for (int c : {0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF})
    EXPECT_TRUE(std::isnan(to_float(fp8_e5m2{uint8_t(c)})));
  EXPECT_TRUE(std::isnan(to_float(from_float<fp8_e5m2>(nan_))));
}

TEST(Fp8E4M3FN, KnownValuesAndSaturation) {
  EXPECT_EQ(to_float(fp8_e4m3{0x7E}), 448.0f);   // max = 1.75 * 2^8
  EXPECT_EQ(to_float(fp8_e4m3{0x78}), 256.0f);   // exponent field 15 is finite in FN
  EXPECT_EQ(to_float(fp8_e4m3{0x08}), 0x1p-6f);  // min normal
  EXPECT_EQ(to_float(fp8_e4m3{0x01}), 0x1p-9f);  // smallest subnormal
  EXPECT_EQ(e4(448.0f), 0x7E);
  EXPECT_EQ(e4(240.0f), 0x77);
  EXPECT_EQ(e4(464.0f), 0x7E);  // halfway to 480, which does not exist
  EXPECT_EQ(e4(500.0f), 0x7E);  // saturates
  EXPECT_EQ(e4(1e30f), 0x7E);
  EXPECT_EQ(e4(-1e30f), 0xFE);
  EXPECT_EQ(e4(inf), 0x7E);  // no infinities: +-inf saturate too
  EXPECT_EQ(e4(-inf), 0xFE);
  EXPECT_EQ(e4(nan_) & 0x7F, 0x7F);
  EXPECT_TRUE(std::isnan(to_float(fp8_e4m3{0x7F})));
  EXPECT_TRUE(std::isnan(to_float(fp8_e4m3{0xFF})));
  EXPECT_EQ(to_float(from_float<fp8_e4m3>(1.3f)), 1.25f);
}

TEST(Fp8, AllCodesRoundTrip) {
  for (int c = 0; c < 256; ++c) {
    const float a = to_float(fp8_e4m3{uint8_t(c)});
    const float b = to_float(fp8_e5m2{uint8_t(c)});
    if (std::isnan(a))
      EXPECT_TRUE(std::isnan(to_float(from_float<fp8_e4m3>(a))));
    else
      EXPECT_EQ(e4(a), c) << c;
    if (std::isnan(b))
      EXPECT_TRUE(std::isnan(to_float(from_float<fp8_e5m2>(b))));
    else
      EXPECT_EQ(e5(b), c) << c;
  }
  // Exactly one NaN magnitude code in E4M3FN, three in E5M2.
  int nan4 = 0, nan5 = 0;
  for (int c = 0; c < 128; ++c) {
    nan4 += std::isnan(to_float(fp8_e4m3{uint8_t(c)}));
    nan5 += std::isnan(to_float(fp8_e5m2{uint8_t(c)}));
  }
  EXPECT_EQ(nan4, 1);
  EXPECT_EQ(nan5, 3);
}

TEST(CustomFormat, Limits) {
  EXPECT_EQ(E5M2.max_value(), 57344.0f);
  EXPECT_EQ(E4M3.max_value(), 240.0f);  // IEEE-style; fp8_e4m3 (FN) reaches 448
  EXPECT_EQ(E3M0.max_value(), 8.0f);
  EXPECT_EQ(E5M10.max_value(), 65504.0f);
  EXPECT_EQ(E8M7.max_value(), 0x1.FEp127f);
  EXPECT_EQ(E5M2.min_normal(), 0x1p-14f);
  EXPECT_EQ(E4M3.min_normal(), 0x1p-6f);
  EXPECT_EQ(E3M0.min_normal(), 0.25f);
  EXPECT_EQ(E8M7.min_subnormal(), 0x1p-133f);
  EXPECT_EQ(E5M2.bits(), 8);
  EXPECT_EQ(E3M0.bits(), 4);
  EXPECT_EQ(E8M7.unit_roundoff(), 0x1p-8f);
}

TEST(CustomFormat, RoundToKnownValues) {
  EXPECT_EQ(round_to(1.3f, E5M2), 1.25f);
  EXPECT_EQ(round_to(1.3f, E4M3), 1.25f);
  EXPECT_EQ(round_to(0.1f, E5M2), 0.09375f);
  EXPECT_EQ(round_to(247.0f, E4M3), 240.0f);
  EXPECT_EQ(round_to(248.0f, E4M3), inf);  // max + half ulp, even code is inf
  EXPECT_EQ(round_to(-1e6f, E5M2), -inf);
  const CustomFormat sat{4, 3, true};
  EXPECT_EQ(round_to(248.0f, sat), 240.0f);
  EXPECT_EQ(round_to(-inf, sat), -240.0f);
  EXPECT_TRUE(std::isnan(round_to(nan_, E4M3)));
  EXPECT_TRUE(std::isnan(round_to(nan_, E3M0)));  // no NaN code, but values stay NaN
  EXPECT_EQ(encode(240.0f, E4M3), 0x77u);
  EXPECT_EQ(encode(inf, E4M3), 0x78u);
  EXPECT_EQ(encode(-0.0f, E3M0), 0x8u);
  // M = 0: powers of two; ties go to the even code (= even exponent field).
  EXPECT_EQ(round_to(1.5f, E3M0), 2.0f);    // 1 = field 3 | 2 = field 4
  EXPECT_EQ(round_to(3.0f, E3M0), 2.0f);    // 2 = field 4 | 4 = field 5
  EXPECT_EQ(round_to(6.0f, E3M0), 8.0f);    // 4 = field 5 | 8 = field 6
  EXPECT_EQ(round_to(0.125f, E3M0), 0.0f);  // 0 | min normal 0.25
  EXPECT_EQ(round_to(12.0f, E3M0), 8.0f);   // 8 = field 6 | inf = field 7
  EXPECT_EQ(round_to(12.5f, E3M0), inf);
}

// E8M23 is float itself: rounding must be the identity on every non-NaN float.
TEST(CustomFormat, E8M23IsFloat) {
  const CustomFormat f32{8, 23};
  for (uint64_t i = 0; i < (1ull << 32); i += 4099) {
    const float x = float_from_bits(uint32_t(i));
    if (std::isnan(x)) continue;
    ASSERT_EQ(encode(x, f32), uint32_t(i));
    ASSERT_TRUE(same(decode(uint32_t(i), f32), x));
  }
}

TEST(CustomFormat, CodecRoundTripsEveryCode) {
  for (const CustomFormat f : {E5M2, E4M3, E3M0, E8M7}) {
    for (uint32_t c = 0; c < (1u << f.bits()); ++c) {
      const float v = decode(c, f);
      if (std::isnan(v)) {
        ASSERT_TRUE(std::isnan(decode(encode(v, f), f))) << f.E << f.M << " " << c;
      } else {
        ASSERT_EQ(encode(v, f), c) << "E" << f.E << "M" << f.M << " code " << c;
        ASSERT_TRUE(same(round_to(v, f), v));
      }
    }
  }
}

TEST(CustomFormat, AgreesWithStorageTypes) {
  for (uint32_t c = 0; c < 256; ++c)
    ASSERT_TRUE(same(decode(c, E5M2), to_float(fp8_e5m2{uint8_t(c)}))) << c;
  for (uint32_t c = 0; c < 65536; ++c) {
    ASSERT_TRUE(same(decode(c, E5M10), to_float(fp16{uint16_t(c)}))) << c;
    ASSERT_TRUE(same(decode(c, E8M7), to_float(bf16{uint16_t(c)}))) << c;
  }
  for (uint64_t i = 0; i < (1ull << 32); i += 65521) {
    const float x = float_from_bits(uint32_t(i));
    if (std::isnan(x)) continue;
    ASSERT_EQ(encode(x, E5M2), e5(x));
    ASSERT_EQ(encode(x, E5M10), hf(x));
    ASSERT_EQ(encode(x, E8M7), bf(x));
  }
}

TEST(Convert, FromDoubleRoundsOnce) {
  const double x = 1.0 + 0x1p-8 + 0x1p-30;  // just above a bf16 tie; float(x) is the tie
  EXPECT_EQ(convert<bf16>(x).bits, 0x3F81);
  EXPECT_EQ(from_float<bf16>(float(x)).bits, 0x3F80);
  EXPECT_EQ(convert<fp16>(1.0 + 0x1p-11 + 0x1p-40).bits, 0x3C01);
  EXPECT_EQ(convert<fp8_e4m3>(1e300).bits, 0x7E);
  EXPECT_EQ(convert<fp8_e5m2>(-1e300).bits, 0xFC);
  EXPECT_EQ(convert<bf16>(1e300).bits, 0x7F80);
  EXPECT_EQ(convert<bf16>(1e-300).bits, 0x0000);
  EXPECT_EQ(convert<bf16>(-5e-324).bits, 0x8000);
  EXPECT_EQ(convert<float>(0.1), 0.1f);
  EXPECT_EQ(convert<double>(0.1f), double(0.1f));
  EXPECT_EQ(convert<double>(0.1), 0.1);
  EXPECT_EQ(convert<double>(bf16{0x3F81}), 1.0 + 0x1p-7);
  EXPECT_EQ(convert<bf16>(fp16{0x3555}).bits, 0x3EAB);  // 0x1.554p-2 -> 0x1.56p-2
  EXPECT_EQ(to_double(fp8_e4m3{0x7E}), 448.0);
  EXPECT_EQ(convert<fp16>(bf16{0x3F80}).bits, 0x3C00);
}

TEST(SrBits, KnownAnswerDeterministicAndDistinct) {
  // Philox4x32-10 known-answer vectors (key = seed, counter = (index, step)).
  EXPECT_EQ(sr_bits(0, 0, 0), 0x6627e8d5u);
  EXPECT_EQ(sr_bits(~0ull, ~0ull, ~0ull), 0x408f276du);
  EXPECT_EQ(sr_bits(0x299f31d0a4093822ull, 0x0370734413198a2eull, 0x85a308d3243f6a88ull),
            0xd16cfe09u);
  EXPECT_EQ(sr_bits(42, 7, 1000), sr_bits(42, 7, 1000));
  EXPECT_NE(sr_bits(42, 7, 1000), sr_bits(42, 7, 1001));
  EXPECT_NE(sr_bits(42, 7, 1000), sr_bits(42, 8, 1000));
  EXPECT_NE(sr_bits(42, 7, 1000), sr_bits(43, 7, 1000));
  int distinct_from_previous = 0;
  for (uint64_t i = 1; i < 1000; ++i)
    distinct_from_previous += sr_bits(1, 0, i) != sr_bits(1, 0, i - 1);
  EXPECT_EQ(distinct_from_previous, 999);
}

namespace {
// Mean of n stochastic roundings of x (lower neighbour lo, spacing ulp) must lie within
// 5 standard errors, ulp * sqrt(p(1-p)/n) with p = (x - lo)/ulp, of x; every draw must
// be lo or lo + ulp.
template <class Round>
void expect_unbiased(double x, double lo, double ulp, Round round, int n = 200000) {
  const double p = (x - lo) / ulp;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    const double r = round(sr_bits(2024, 0, uint64_t(i)));
    ASSERT_TRUE(r == lo || r == lo + ulp) << r;
    sum += r;
  }
  const double se = ulp * std::sqrt(p * (1 - p) / n);
  EXPECT_NEAR(sum / n, x, 5 * se);
}
}  // namespace

TEST(StochasticRounding, UnbiasedBf16) {
  const float x = 1.0f + 0.3f * 0x1p-7f;  // 1 + 0.3 ulp
  expect_unbiased(x, 1.0, 0x1p-7, [&](uint32_t r) { return to_float(from_float_sr<bf16>(x, r)); });
  expect_unbiased(-x, -1.0 - 0x1p-7, 0x1p-7,
                  [&](uint32_t r) { return to_float(from_float_sr<bf16>(-x, r)); });
}

TEST(StochasticRounding, UnbiasedSubnormalAndCustom) {
  const float tiny = 0.25f * 0x1p-24f;  // a quarter of fp16's smallest subnormal
  expect_unbiased(tiny, 0.0, 0x1p-24,
                  [&](uint32_t r) { return to_float(from_float_sr<fp16>(tiny, r)); });
  expect_unbiased(1.25, 1.0, 1.0, [](uint32_t r) { return round_to_sr(1.25f, E3M0, r); });
  expect_unbiased(double(0.1f), 0.09375, 0x1p-6,
                  [](uint32_t r) { return round_to_sr(0.1f, E5M2, r); });
  const double d = 1.0 + 0.7 * 0x1p-23;  // double to float
  expect_unbiased(d, 1.0, 0x1p-23, [&](uint32_t r) { return convert_sr<float>(d, r); });
}

// Rounds up iff random < (dropped fraction of an ulp) * 2^32; fractions chosen exact.
TEST(StochasticRounding, ThresholdIsTheDroppedFraction) {
  const float x = 1.0f + 0x1p-7f * (0.25f + 0x1p-16f);  // bf16: fraction 2^30 + 2^16
  EXPECT_EQ(from_float_sr<bf16>(x, 0x40010000u - 1).bits, 0x3F81);
  EXPECT_EQ(from_float_sr<bf16>(x, 0x40010000u).bits, 0x3F80);
  const double d = 1.0 + 0x1p-23 * (0.5 + 0x1p-20);  // double to float: 2^31 + 2^12
  EXPECT_EQ(convert_sr<float>(d, 0x80001000u - 1), 1.0f + 0x1p-23f);
  EXPECT_EQ(convert_sr<float>(d, 0x80001000u), 1.0f);
  const double e = 1.0 + 0x1p-7 * (0.75 + 0x1p-31);  // double to bf16: 3 * 2^30 + 2
  EXPECT_EQ(convert_sr<bf16>(-e, 0xC0000002u - 1).bits, 0xBF81);
  EXPECT_EQ(convert_sr<bf16>(-e, 0xC0000002u).bits, 0xBF80);
}

// bf16's conversion from float (integer steps) against the general encoder with bf16's
// layout (E8M7), both modes: every sign and exponent, with low halves that make ties, the
// overflow edge and subnormals, the stochastic bits on either side of the threshold and random.
// A NaN becomes a quiet NaN of the same sign, a signaling one included.
TEST(Bf16, NarrowingMatchesTheGeneralEncoder) {
  for (uint32_t top = 0; top < 65536; ++top)
    for (const uint32_t low : {0x0000u, 0x0001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu}) {
      const uint32_t u = top << 16 | low;
      const float x = float_from_bits(u);
      if (std::isnan(x)) {
        for (const uint16_t code : {bf(x), from_float_sr<bf16>(x, ~0u).bits}) {
          ASSERT_EQ(code & 0x7FC0u, 0x7FC0u) << std::hex << u;
          ASSERT_EQ(code >> 15, u >> 31) << std::hex << u;
        }
        continue;
      }
      ASSERT_EQ(bf(x), encode(x, E8M7)) << std::hex << u;
      for (const uint32_t r : {0u, (low << 16) - 1, low << 16, ~0u, sr_bits(3, top, low)})
        ASSERT_EQ(from_float_sr<bf16>(x, r).bits, encode_sr(x, E8M7, r))
            << std::hex << u << " " << r;
    }
}

// fp16's conversion from float (bit steps, a float add for subnormal results) against the
// general encoder with fp16's layout (E5M10): every sign, exponent and kept fraction, with low
// 13 bits that make ties (a subnormal result's ties are among the kept bits), the overflow
// edge at 65520 and NaN.
TEST(Fp16, NarrowingMatchesTheGeneralEncoder) {
  for (uint32_t top = 0; top < (1u << 19); ++top)
    for (const uint32_t low : {0x0000u, 0x0001u, 0x0FFFu, 0x1000u, 0x1001u, 0x1FFFu}) {
      const uint32_t u = top << 13 | low;
      ASSERT_EQ(hf(float_from_bits(u)), general(float_from_bits(u), E5M10)) << std::hex << u;
    }
}

// encode's path for E ≤ 7 (bit steps, a float add for subnormal results, selects) against the
// general encoder: every sign, exponent and top 19 fraction bits, with low 13 bits that make the
// ties of M = 10 (smaller M have theirs among the top bits), so every rounding carry, subnormal
// result, overflow edge, inf and NaN; saturating formats too.
TEST(CustomFormat, NarrowNearestMatchesTheGeneralEncoder) {
  const CustomFormat formats[] = {E5M2,  E4M3,         E3M0,         {2, 1},
                                  E5M10, {7, 3, true}, {4, 3, true}, {6, 0, true}};
  for (const CustomFormat f : formats)
    for (uint32_t top = 0; top < (1u << 19); ++top)
      for (const uint32_t low : {0x0000u, 0x0001u, 0x0FFFu, 0x1000u, 0x1001u, 0x1FFFu}) {
        const float x = float_from_bits(top << 13 | low);
        ASSERT_EQ(encode(x, f), general(x, f))
            << "E" << f.E << "M" << f.M << (f.saturate ? " saturating " : " ") << std::hex
            << (top << 13 | low);
      }
}

TEST(StochasticRounding, RepresentableValuesAreExact) {
  for (uint32_t i = 0; i < 1000; ++i) {
    const uint32_t r = sr_bits(5, 0, i);
    EXPECT_EQ(to_float(from_float_sr<fp8_e4m3>(1.25f, r)), 1.25f);
    EXPECT_EQ(to_float(from_float_sr<bf16>(-3.0f, r)), -3.0f);
    EXPECT_EQ(round_to_sr(0.25f, E3M0, r), 0.25f);
    EXPECT_EQ(convert_sr<float>(0.5, r), 0.5f);
  }
  EXPECT_EQ(from_float_sr<fp8_e4m3>(1e6f, ~0u).bits, 0x7E);  // saturates under SR too
  EXPECT_EQ(from_float_sr<fp8_e5m2>(1e6f, 0u).bits, 0x7C);
}

TEST(FormatNames, ParseAndPrint) {
  EXPECT_EQ(parse_format("fp64").format, Format::fp64);
  EXPECT_EQ(parse_format("fp32").format, Format::fp32);
  EXPECT_EQ(parse_format("BF16").format, Format::bf16);
  EXPECT_EQ(parse_format("fp16").format, Format::fp16);
  EXPECT_EQ(parse_format("e4m3").format, Format::fp8_e4m3);
  EXPECT_EQ(parse_format("fp8_e4m3").format, Format::fp8_e4m3);
  EXPECT_EQ(parse_format("e5m2").format, Format::fp8_e5m2);
  EXPECT_EQ(parse_format("fp8_e5m2").format, Format::fp8_e5m2);
  const FormatSpec e3m0 = parse_format("e3m0");
  EXPECT_EQ(e3m0.format, Format::custom);
  EXPECT_EQ(e3m0.custom.E, 3);
  EXPECT_EQ(e3m0.custom.M, 0);
  const FormatSpec c52 = parse_format("custom:e5m2");
  EXPECT_EQ(c52.format, Format::custom);
  EXPECT_EQ(c52.custom.E, 5);
  EXPECT_EQ(c52.custom.M, 2);
  EXPECT_EQ(parse_format("e8m23").custom.M, 23);
  for (const char* bad : {"", "fp12", "e9m2", "e1m3", "e4m24", "e4", "e4m", "custom:", "e4m3x",
                          "custom:e-1m2", "e00004m3"})
    EXPECT_THROW(parse_format(bad), std::invalid_argument) << bad;
  try {
    parse_format("fp12");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("bf16"), std::string::npos);
  }
  for (const char* s :
       {"fp64", "fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "custom:e4m3", "custom:e3m0"})
    EXPECT_EQ(to_string(parse_format(s)), s);
  EXPECT_STREQ(name(Format::bf16), "bf16");
}

TEST(FormatNames, SizesTraitsRoundoff) {
  EXPECT_EQ(bytes_per_value(Format::fp64), 8u);
  EXPECT_EQ(bytes_per_value(Format::fp32), 4u);
  EXPECT_EQ(bytes_per_value(Format::bf16), 2u);
  EXPECT_EQ(bytes_per_value(Format::fp16), 2u);
  EXPECT_EQ(bytes_per_value(Format::fp8_e4m3), 1u);
  EXPECT_EQ(bytes_per_value(Format::fp8_e5m2), 1u);
  static_assert(format_traits<double>::format == Format::fp64 && format_traits<double>::bytes == 8);
  static_assert(format_traits<float>::format == Format::fp32 && format_traits<float>::bytes == 4);
  static_assert(format_traits<bf16>::bytes == int(sizeof(bf16)));
  static_assert(format_traits<fp16>::bytes == int(sizeof(fp16)));
  static_assert(format_traits<fp8_e4m3>::bytes == int(sizeof(fp8_e4m3)));
  static_assert(format_traits<fp8_e5m2>::bytes == int(sizeof(fp8_e5m2)));
  EXPECT_STREQ(format_traits<fp8_e5m2>::name, "fp8_e5m2");
  EXPECT_STREQ(format_traits<bf16>::name, "bf16");
  EXPECT_EQ(unit_roundoff(Format::fp64), 0x1p-53);
  EXPECT_EQ(unit_roundoff(Format::fp32), 0x1p-24);
  EXPECT_EQ(unit_roundoff(Format::bf16), 0x1p-8);
  EXPECT_EQ(unit_roundoff(Format::fp16), 0x1p-11);
  EXPECT_EQ(unit_roundoff(Format::fp8_e4m3), 0x1p-4);
  EXPECT_EQ(unit_roundoff(Format::fp8_e5m2), 0x1p-3);
  EXPECT_THROW(unit_roundoff(Format::custom), std::invalid_argument);
}
