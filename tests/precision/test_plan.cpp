// The nine-knob precision plan: presets, deck keys and their errors, how a plan maps onto the
// compiled types, and the rounding that emulates the knobs without a type of their own.
#include <gtest/gtest.h>

#include <cmath>

#include "minisgd/core/errors.hpp"
#include "minisgd/precision/plan.hpp"
#include "support/test_support.hpp"

using namespace minisgd;
using namespace minisgd::precision;

namespace {

const char* kCa = "solver: {method: ca-sgd, s: 4}\n";

}  // namespace

TEST(Plan, MixedPresetIsThePublishedRecipe) {
  const Plan p = preset_plan("mixed");
  for (Knob k : {Knob::data, Knob::gram_input, Knob::margin_wire})
    EXPECT_EQ(p[k].format, Format::bf16) << name(k);
  for (Knob k : {Knob::gram_accum, Knob::gram_wire, Knob::margin_accum, Knob::recurrence,
                 Knob::gradient_accum, Knob::weights})
    EXPECT_EQ(p[k].format, Format::fp32) << name(k);
  EXPECT_EQ(preset_plan("mixed-wire-bf16")[Knob::gram_wire].format, Format::bf16);
  EXPECT_TRUE(preset_plan("fp64").uniform(Format::fp64));
  EXPECT_THROW(preset_plan("fp8"), std::invalid_argument);
}

TEST(Plan, RealizationSaysWhatIsNativeAndWhatIsEmulated) {
  const Realization mixed = realize(preset_plan("mixed"));
  EXPECT_EQ(mixed.storage, Format::bf16);
  EXPECT_EQ(mixed.gram_input, Format::bf16);
  EXPECT_EQ(mixed.compute, Format::fp32);
  EXPECT_EQ(mixed.wire, Format::fp32);          // bf16 margins ride in the fp32 Gram message
  EXPECT_EQ(mixed.margins_wire, Format::bf16);  // alone they travel as bf16
  for (Knob k : all_knobs) EXPECT_EQ(mixed.native[int(k)], k != Knob::margin_wire) << name(k);

  Plan p = preset_plan("fp32");
  p[Knob::data] = parse_format("e4m3");
  p[Knob::gram_accum] = parse_format("bf16");
  p[Knob::weights] = parse_format("fp64");
  p[Knob::gram_wire] = parse_format("custom:e5m12");
  const Realization r = realize(p);
  EXPECT_EQ(r.storage, Format::bf16);  // fp8 values are exact bf16 values
  EXPECT_EQ(r.compute, Format::fp64);  // one fp64 knob makes the arithmetic fp64
  EXPECT_FALSE(r.native[int(Knob::data)]);
  EXPECT_FALSE(r.native[int(Knob::gram_accum)]);
  EXPECT_FALSE(r.native[int(Knob::recurrence)]);  // fp32 emulated in fp64
  EXPECT_TRUE(r.native[int(Knob::weights)]);
  EXPECT_EQ(r.wire, Format::fp32);
  EXPECT_EQ(container(parse_format("custom:e5m12")), Format::fp32);
  EXPECT_EQ(container(parse_format("custom:e3m2")), Format::bf16);
  const auto j = to_json(p, r);
  EXPECT_EQ(j["knobs"]["data"]["format"], "fp8_e4m3");
  EXPECT_EQ(j["knobs"]["data"]["native"], false);
  EXPECT_EQ(j["compiled"]["storage"], "bf16");
}

TEST(Plan, DeckKnobsOverrideThePreset) {
  const Config c = test::deck(
      std::string(kCa) + "precision: {preset: mixed, gram_wire: fp16, rounding: stochastic}\n");
  EXPECT_EQ(c.precision.plan[Knob::gram_wire].format, Format::fp16);
  EXPECT_EQ(c.precision.plan[Knob::data].format, Format::bf16);
  EXPECT_EQ(c.precision.plan.rounding, Rounding::stochastic);
  EXPECT_EQ((*c.resolved)["precision"]["gram_wire"], "fp16");
  EXPECT_EQ((*c.resolved)["precision"]["data"], "bf16");     // the preset's value is recorded too
  EXPECT_EQ(c.solver.decomposition, Decomposition::column);  // ca-sgd's default
}

TEST(Plan, DeckErrorsNameTheKey) {
  EXPECT_TRUE(test::refused(std::string(kCa) + "precision:\n  gram_accum: fp12\n",
                            "test-deck:3: precision.gram_accum: unknown precision format 'fp12'"));
  // sgd takes data, margin_accum, gradient_accum and weights; it computes in one type.
  EXPECT_TRUE(test::refused("precision:\n  weights: bf16\n",
                            "test-deck:2: precision.weights: sgd keeps w"));
  EXPECT_TRUE(
      test::refused("precision:\n  gram_wire: bf16\n", "precision.gram_wire: a ca-sgd knob"));
  EXPECT_TRUE(test::refused("precision: {data: fp64, weights: fp32}\n",
                            "precision.data: fp64 data need fp64 weights"));
  EXPECT_TRUE(test::refused("precision: {margin_accum: fp64}\n",
                            "precision.margin_accum: sgd accumulates"));
  EXPECT_TRUE(test::refused("precision: {data: e4m3}\n", "precision.data: sgd stores X as"));
  EXPECT_TRUE(test::refused("solver: {method: ca-sgd, decomposition: row}\n",
                            "solver.decomposition: ca-sgd works in the column decomposition"));
  EXPECT_TRUE(test::refused("solver: {s: 4}\n", "solver.s:"));
  EXPECT_TRUE(test::refused("run: {study: precision}\n", "needs solver.method: ca-sgd"));
  EXPECT_TRUE(test::refused(std::string(kCa) + "run: {study_format: e9m1}\n", "run.study_format"));
  // sgd may name its one precision through data and weights.
  EXPECT_EQ(test::deck("precision: {data: fp64, weights: fp64}\n").precision.preset, Preset::fp64);
  // The mixed preset gives sgd bf16 storage; the ca-sgd knobs take sgd's arithmetic format.
  const Config mixed = test::deck("precision: {preset: mixed}\n");
  EXPECT_EQ(mixed.precision.plan[Knob::data].format, Format::bf16);
  EXPECT_EQ(mixed.precision.plan[Knob::margin_wire].format, Format::fp32);
  EXPECT_EQ(realize(mixed.precision.plan).compute, Format::fp32);
}

TEST(Rounder, EmulatesFormatsInFloatAndDouble) {
  const Rounder bf = Rounder::to({Format::bf16, {}}, Format::fp32, false, 0);
  EXPECT_FALSE(bf.identity);
  EXPECT_EQ(bf(1.0f + 0x1p-8f), 1.0f);                  // a tie rounds to even
  EXPECT_EQ(bf(1.0 + 0x1p-8 + 0x1p-30), 1.0 + 0x1p-7);  // from double, rounded once
  const Rounder e5 = Rounder::to({Format::fp8_e5m2, {}}, Format::fp64, false, 0);
  EXPECT_EQ(e5(0.1), 0.09375);
  EXPECT_EQ(e5(1.3), 1.25);
  const Rounder f32 = Rounder::to({Format::fp32, {}}, Format::fp64, false, 0);
  EXPECT_EQ(f32(0.1), double(0.1f));
  EXPECT_TRUE(Rounder::to({Format::fp32, {}}, Format::fp32, false, 0).identity);
  EXPECT_TRUE(Rounder::to({Format::fp64, {}}, Format::fp32, false, 0).identity);
  const Rounder c = Rounder::to(parse_format("custom:e4m3"), Format::fp32, false, 0);
  EXPECT_EQ(c(300.0f), INFINITY);  // IEEE-style E4M3 stops at 240
}

// Stochastic rounding is unbiased: the mean of 2^16 draws of 1 + ulp/4 in bf16 is within
// 4 standard deviations (σ = ulp·sqrt(p(1−p)/n), p = 1/4) of the input, and the bits depend
// only on (seed, step, index).
TEST(Rounder, StochasticRoundingIsUnbiasedAndKeyed) {
  const Rounder sr = Rounder::to({Format::bf16, {}}, Format::fp32, true, 99);
  const float ulp = 0x1p-7f, x = 1.0f + ulp / 4;
  const int n = 1 << 16;
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += sr(x, 3, std::uint64_t(i));
  const double sigma = ulp * std::sqrt(0.25 * 0.75 / n);
  EXPECT_NEAR(sum / n, x, 4 * sigma);
  EXPECT_EQ(sr(x, 3, 17), sr(x, 3, 17));
}
