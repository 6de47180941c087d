#pragma once
// GLM losses on the margin z = x·w (docs/design.md). Evaluated in the caller's precision R.
#include <cmath>

#include "minisgd/core/vocabulary.hpp"
#include "minisgd/core/kokkos.hpp"

namespace minisgd {

template <class R>
KOKKOS_INLINE_FUNCTION R loss_value(Loss loss, R z, R y) {
  using std::exp;
  using std::log1p;
  using std::fabs;
  switch (loss) {
    case Loss::logistic: {
      // log(1 + e^{-yz}) without overflow: max(t,0) + log1p(e^{-|t|}), t = -yz.
      const R t = -y * z;
      return kmax(t, R(0)) + log1p(exp(-fabs(t)));
    }
    case Loss::linear: return R(0.5) * (z - y) * (z - y);
    case Loss::poisson: return exp(z) - y * z;
  }
  return R(0);
}

/// dℓ/dz.
template <class R>
KOKKOS_INLINE_FUNCTION R loss_derivative(Loss loss, R z, R y) {
  using std::exp;
  switch (loss) {
    case Loss::logistic: {
      // -y·σ(-yz), written so neither branch overflows.
      const R t = -y * z;
      const R sig = t >= R(0) ? R(1) / (R(1) + exp(-t)) : exp(t) / (R(1) + exp(t));
      return -y * sig;
    }
    case Loss::linear: return z - y;
    case Loss::poisson: return exp(z) - y;
  }
  return R(0);
}

}  // namespace minisgd
