#pragma once
// Synthetic GLM problems generated from a counter-based RNG keyed by (seed, global row,
// column block), so any rank can generate any entry and the data never depends on P.
// Every entry is drawn once: one Philox4x32 call gives the four features of a block of four
// columns (two Box-Muller pairs in float), and a row's label follows from its margin x·w*,
// summed in fixed point so that partial margins of a column decomposition add up to the
// same integer, hence the same label, at every P.
#include <Random123/philox.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "minisgd/config/config.hpp"
#include "minisgd/core/kokkos.hpp"

namespace minisgd {

struct SyntheticShape {
  std::int64_t rows;
  std::int64_t features;
  Loss loss;             // the loss the labels are drawn for
  double feature_scale;  // x_ij ~ N(0, scale²)
  double margin_std;     // std of x·w*
};

/// Default shape of each kind (rows/features of 0 in the deck select these).
SyntheticShape synthetic_shape(const SyntheticConfig& c);

class SyntheticGenerator {
 public:
  /// Margins are summed as integers in units of 2^-40: |x·w*| < 2^23 cannot overflow.
  static constexpr double kFixedScale = 1099511627776.0;

  SyntheticGenerator(std::uint64_t seed, const SyntheticShape& shape, double noise)
      : seed_(seed),
        shape_(shape),
        noise_(noise),
        // ‖w*‖ ≈ sqrt(d)·w_scale, so x·w* has std ≈ margin_std.
        w_scale_(shape.margin_std / (shape.feature_scale * std::sqrt(double(shape.features)))) {}

  /// Features of columns 4k .. 4k+3 of `row` (columns ≥ d are drawn too and ignored).
  KOKKOS_INLINE_FUNCTION void feature_block(std::int64_t row, std::int64_t k, double out[4]) const {
    const auto r = draw(row, k, 0);
    const float s = float(shape_.feature_scale);
    normal_pair(r[0], r[1], s, out[0], out[1]);
    normal_pair(r[2], r[3], s, out[2], out[3]);
  }
  KOKKOS_INLINE_FUNCTION double true_weight(std::int64_t col) const {
    const auto r = draw(-1, col, 1);
    const double u1 = (double(r[0]) + 0.5) * 2.3283064365386963e-10;
    const double u2 = (double(r[1]) + 0.5) * 2.3283064365386963e-10;
    return w_scale_ * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
  }
  /// x·w_j in fixed point; summing these over the columns in any grouping gives one integer.
  KOKKOS_INLINE_FUNCTION static std::int64_t fixed(double xw) {
    return std::int64_t(llrint(xw * kFixedScale));
  }
  /// The label of `row` from its margin (the fixed-point sum over every column).
  KOKKOS_INLINE_FUNCTION double label(std::int64_t row, std::int64_t margin_fixed) const {
    const double z = double(margin_fixed) / kFixedScale;
    switch (shape_.loss) {
      case Loss::logistic: return uniform(row, 0) < 1.0 / (1.0 + exp(-z)) ? 1.0 : -1.0;
      case Loss::linear: {
        const auto r = draw(row, -1, 2);
        double a, b;
        normal_pair(r[0], r[1], 1.0f, a, b);
        return z + noise_ * a;
      }
      case Loss::poisson: {
        // Knuth's product of uniforms; rates e^z stay small (margin_std 0.5).
        const double limit = exp(-exp(z));
        double prod = uniform(row, 0);
        int k = 0;
        while (prod > limit && k < 1000) prod *= uniform(row, ++k);
        return double(k);
      }
    }
    return 0;
  }

 private:
  KOKKOS_INLINE_FUNCTION r123::Philox4x32::ctr_type draw(std::int64_t a, std::int64_t b,
                                                         std::uint32_t stream) const {
    r123::Philox4x32 rng;
    const r123::Philox4x32::key_type key = {{std::uint32_t(seed_), std::uint32_t(seed_ >> 32)}};
    const r123::Philox4x32::ctr_type ctr = {
        {std::uint32_t(a), std::uint32_t(std::uint64_t(a) >> 32), std::uint32_t(b), stream}};
    return rng(ctr, key);
  }
  // Box-Muller in float on 2 × 32 random bits: two independent N(0, s²) values.
  KOKKOS_INLINE_FUNCTION static void normal_pair(std::uint32_t a, std::uint32_t b, float s,
                                                 double& x, double& y) {
    const float u1 = (float(a >> 8) + 0.5f) * 5.9604645e-08f;  // (0, 1), 24 bits
    const float u2 = float(b >> 8) * 3.7450702e-07f;           // 2π · [0, 1)
    const float radius = s * sqrtf(-2.0f * logf(u1));
    x = double(radius * cosf(u2));
    y = double(radius * sinf(u2));
  }
  KOKKOS_INLINE_FUNCTION double uniform(std::int64_t row, int k) const {
    const auto r = draw(row, k, 3);
    return (double(r[0]) + 0.5) * 2.3283064365386963e-10;
  }

  std::uint64_t seed_;
  SyntheticShape shape_;
  double noise_;
  double w_scale_;
};

}  // namespace minisgd
