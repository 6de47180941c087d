#pragma once
// Synthetic GLM problems generated from a counter-based RNG keyed by (seed, global original
// row, column), so any rank can generate any entry and the data never depends on P.
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
  Loss loss;  // the loss the labels are drawn for
  double feature_scale;  // x_ij ~ N(0, scale²)
  double margin_std;     // std of x·w*
};

/// Default shape of each kind (rows/features of 0 in the deck select these).
SyntheticShape synthetic_shape(const SyntheticConfig& c);

class SyntheticGenerator {
 public:
  SyntheticGenerator(std::uint64_t seed, const SyntheticShape& shape, double noise)
      : seed_(seed), shape_(shape), noise_(noise),
        // ‖w*‖ ≈ sqrt(d)·w_scale, so x·w* has std ≈ margin_std.
        w_scale_(shape.margin_std / (shape.feature_scale * std::sqrt(double(shape.features)))) {}

  KOKKOS_INLINE_FUNCTION double feature(std::int64_t row, std::int64_t col) const {
    return shape_.feature_scale * normal(row, col, 0);
  }
  KOKKOS_INLINE_FUNCTION double true_weight(std::int64_t col) const {
    return w_scale_ * normal(-1, col, 1);
  }
  KOKKOS_INLINE_FUNCTION double label(std::int64_t row) const {
    double z = 0;
    for (std::int64_t j = 0; j < shape_.features; ++j) z += feature(row, j) * true_weight(j);
    switch (shape_.loss) {
      case Loss::logistic:
        return uniform(row, 0) < 1.0 / (1.0 + exp(-z)) ? 1.0 : -1.0;
      case Loss::linear:
        return z + noise_ * normal(row, -1, 2);
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
  // Box-Muller on 2 × 32 random bits.
  KOKKOS_INLINE_FUNCTION double normal(std::int64_t a, std::int64_t b, std::uint32_t stream) const {
    const auto r = draw(a, b, stream);
    const double u1 = (double(r[0]) + 0.5) * 2.3283064365386963e-10;
    const double u2 = (double(r[1]) + 0.5) * 2.3283064365386963e-10;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
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
