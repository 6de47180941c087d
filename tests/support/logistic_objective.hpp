#pragma once
// The L2-regularized logistic objective of weights w on a LIBSVM matrix, in double: the
// reference the solver tests compare minisgd's reported loss and optima with.
#include <cmath>
#include <cstdint>
#include <vector>

#include "minisgd/data/raw_data.hpp"

namespace minisgd::test {

/// (1/m) Σ_r log(1 + exp(−y_r x_r·w)) + λ/2 ‖w‖².
inline double logistic_objective(const RawData& d, const std::vector<double>& w, double l2) {
  double sum = 0, norm2 = 0;
  for (std::int64_t r = 0; r < d.rows; ++r) {
    double z = 0;
    for (auto k = d.row_ptr[r]; k < d.row_ptr[r + 1]; ++k) z += d.val[k] * w[d.col[k]];
    sum += std::log1p(std::exp(-d.labels[r] * z));
  }
  for (double v : w) norm2 += v * v;
  return sum / double(d.rows) + 0.5 * l2 * norm2;
}

}  // namespace minisgd::test
