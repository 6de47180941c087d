#pragma once
// The packed strictly block-lower Gram checked against the same products in double: what the
// Gram tests of every backend (portable, oneDNN, cuBLAS) measure their error with.
#include <cmath>
#include <cstdint>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/kernels/gram/gram.hpp"
#include "minisgd/precision/storage_types.hpp"

namespace minisgd::testkit {

/// Largest |Ĝ − G| / Σ_k |y_rk·y_ck| over the packed entries of the s·b × n matrix Y's Gram
/// (s = rows / b), G computed in double from the stored values of Y.
template <class In, class Acc>
double worst_gram_error(const Matrix<In>& Y, std::int64_t b, const Vector<Acc>& packed) {
  auto y = Kokkos::create_mirror_view_and_copy(HostSpace(), Y);
  auto g = Kokkos::create_mirror_view_and_copy(HostSpace(), packed);
  const std::int64_t s = std::int64_t(y.extent(0)) / b, n = std::int64_t(y.extent(1));
  double worst = 0;
  for (std::int64_t j = 1; j < s; ++j)
    for (std::int64_t l = 0; l < b; ++l)
      for (std::int64_t c = 0; c < j * b; ++c) {
        double exact = 0, scale = 0;
        for (std::int64_t k = 0; k < n; ++k) {
          const double p = precision::to_double(y(j * b + l, k)) * precision::to_double(y(c, k));
          exact += p;
          scale += std::fabs(p);
        }
        const double got = double(g(gram_row_offset(j, b) + l * j * b + c));
        worst = std::fmax(worst, std::fabs(got - exact) / std::fmax(scale, 1e-300));
      }
  return worst;
}

}  // namespace minisgd::testkit
