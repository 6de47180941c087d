#pragma once
// Synthetic GLM problems generated from counter-based hashes keyed by (seed, global row,
// column), so any rank can generate any entry and the data never depends on P. Every entry is
// drawn once and costs a few integer operations (no transcendental function): it is the sum of
// four independent uniform bytes of one 32-bit hash (Irwin-Hall, a bounded bell curve),
// centred and scaled to variance feature_scale². The true weights w* are multiples of
// w_scale·2^-16, so a row's margin x·w* is an exact integer sum: the partial margins of a
// column decomposition add up to the same integer, hence the same label, at every P.
#include <cmath>
#include <cstdint>
#include <string>

#include "minisgd/config/config.hpp"
#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/random123.hpp"

namespace minisgd {

struct SyntheticShape {
  std::int64_t rows;
  std::int64_t features;
  Loss loss;             // the loss the labels are drawn for
  double feature_scale;  // std of x_ij
  double margin_std;     // std of x·w*
};

/// Default shape of each kind (rows/features of 0 in the deck select these).
SyntheticShape synthetic_shape(const SyntheticConfig& c);

class SyntheticGenerator {
 public:
  /// An entry is level(..)·unit(); levels are integers in [-510, 510] with variance 21845.
  static constexpr double kLevelStd = 147.80054127;  // sqrt(4 · (256² - 1) / 12)
  static constexpr double kWeightUnits = 65536.0;    // w*_j = w_scale · W_j / 2^16
  static constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;

  SyntheticGenerator(std::uint64_t seed, const SyntheticShape& shape, double noise)
      : seed_(seed),
        row_seed_(mix64(seed ^ 0x5851F42D4C957F2Dull)),
        shape_(shape),
        noise_(noise),
        // ‖w*‖ ≈ sqrt(d)·w_scale, so x·w* has std ≈ margin_std.
        w_scale_(shape.margin_std / (shape.feature_scale * std::sqrt(double(shape.features)))),
        unit_(float(shape.feature_scale / kLevelStd)),
        margin_unit_(double(unit_) * w_scale_ / kWeightUnits) {}

  /// The 64-bit key of a row: its entries, label and noise all derive from it.
  KOKKOS_INLINE_FUNCTION std::uint64_t row_key(std::int64_t row) const {
    return mix64(row_seed_ + kGolden * (std::uint64_t(row) + 1));
  }
  /// The integer level of entry (row, col) of the row with key `key`.
  KOKKOS_INLINE_FUNCTION static std::int32_t level(std::uint64_t key, std::int64_t col) {
    // A Weyl sequence with the row's own odd step, then a bijective mixer.
    const std::uint32_t h =
        fmix32(std::uint32_t(key) + std::uint32_t(col) * (std::uint32_t(key >> 32) | 1u));
    const std::uint32_t pairs = (h & 0x00FF00FFu) + ((h >> 8) & 0x00FF00FFu);  // SWAR byte sums
    return std::int32_t((pairs & 0xFFFFu) + (pairs >> 16)) - 510;
  }
  /// The value of an entry of level q (a float, stored exactly by fp32 and fp64).
  KOKKOS_INLINE_FUNCTION float value(std::int32_t q) const { return float(q) * unit_; }
  /// W_j, the true weight of a column in units of w_scale·2^-16 (|W_j| < 2^19).
  std::int32_t true_weight(std::int64_t col) const {
    r123::Philox4x32 rng;
    const r123::Philox4x32::ctr_type ctr = {{std::uint32_t(col), std::uint32_t(col >> 32), 1, 1}};
    const r123::Philox4x32::key_type k = {{std::uint32_t(seed_), std::uint32_t(seed_ >> 32)}};
    const auto r = rng(ctr, k);
    const double u1 = (double(r[0]) + 0.5) * 2.3283064365386963e-10;
    const double u2 = (double(r[1]) + 0.5) * 2.3283064365386963e-10;
    return std::int32_t(std::lrint(kWeightUnits * std::sqrt(-2.0 * std::log(u1)) *
                                   std::cos(6.283185307179586 * u2)));
  }
  /// The label of `row` from its margin Σ level·W over every column (an exact integer).
  KOKKOS_INLINE_FUNCTION double label(std::int64_t row, std::int64_t margin) const {
    const double z = double(margin) * margin_unit_;
    const std::uint64_t key = mix64(row_key(row) ^ 0xA0761D6478BD642Full);
    switch (shape_.loss) {
      case Loss::logistic: return uniform(key) < 1.0 / (1.0 + exp(-z)) ? 1.0 : -1.0;
      case Loss::linear: {  // one Box-Muller normal for the noise
        const double u1 = uniform(key), u2 = uniform(mix64(key));
        return z + noise_ * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
      }
      case Loss::poisson: {
        // Knuth's product of uniforms; rates e^z stay small (margin_std 0.5).
        const double limit = exp(-exp(z));
        std::uint64_t k64 = key;
        double prod = uniform(k64);
        int k = 0;
        while (prod > limit && k < 1000) {
          k64 = mix64(k64 + kGolden);
          prod *= uniform(k64);
          ++k;
        }
        return double(k);
      }
    }
    return 0;
  }

 private:
  // SplitMix64's output function and MurmurHash3's 32-bit finaliser: bijective mixers.
  KOKKOS_INLINE_FUNCTION static std::uint64_t mix64(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  KOKKOS_INLINE_FUNCTION static std::uint32_t fmix32(std::uint32_t h) {
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    return h ^ (h >> 16);
  }
  // (0, 1) from the top 53 bits.
  KOKKOS_INLINE_FUNCTION static double uniform(std::uint64_t bits) {
    return (double(bits >> 11) + 0.5) * 1.1102230246251565e-16;
  }

  std::uint64_t seed_;      // keys the true weights (Philox)
  std::uint64_t row_seed_;  // SplitMix64 state of row 0
  SyntheticShape shape_;
  double noise_;
  double w_scale_;
  float unit_;
  double margin_unit_;
};

}  // namespace minisgd
