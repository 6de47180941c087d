#pragma once
// GLM losses on the margin z = x·w (docs/design.md). Evaluated in the caller's precision R.
// Hot kernels take the loss as a template parameter (loss_value<L>, loss_derivative<L>,
// dispatched once per launch by with_loss), so no kernel switches on it per element.
#include <cmath>
#include <type_traits>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/vector_math.hpp"
#include "minisgd/core/vocabulary.hpp"

namespace minisgd {

template <Loss L>
using LossTag = std::integral_constant<Loss, L>;

/// Calls fn(LossTag<L>{}) with L = loss, so a kernel is compiled once per loss.
template <class F>
decltype(auto) with_loss(Loss loss, F&& fn) {
  switch (loss) {
    case Loss::linear: return fn(LossTag<Loss::linear>{});
    case Loss::poisson: return fn(LossTag<Loss::poisson>{});
    case Loss::logistic: break;
  }
  return fn(LossTag<Loss::logistic>{});
}

template <Loss L, class R>
KOKKOS_INLINE_FUNCTION R loss_value(R z, R y) {
  using std::exp;
  using std::fabs;
  using std::log1p;
  if constexpr (L == Loss::logistic) {
    // log(1 + e^{-yz}) without overflow: max(t,0) + log1p(e^{-|t|}), t = -yz; in double by
    // branch-free functions, so that a loop over rows vectorizes (the objective's evaluation).
    const R t = -y * z;
    if constexpr (std::is_same_v<R, double>)
      return kmax(t, R(0)) + log1p_unit(exp_nonpositive(-fabs(t)));
    else
      return kmax(t, R(0)) + log1p(exp(-fabs(t)));
  } else if constexpr (L == Loss::linear) {
    return R(0.5) * (z - y) * (z - y);
  } else {
    return exp(z) - y * z;
  }
}

/// dℓ/dz. Every SGD and CA-SGD path (host and device) calls this one function, so their
/// derivatives have the same bits; it is branch-free so the host loops over a batch vectorize.
template <Loss L, class R>
KOKKOS_INLINE_FUNCTION R loss_derivative(R z, R y) {
  if constexpr (L == Loss::logistic) {
    // -y·σ(-yz) = -y·1/(1+e^-t) for t ≥ 0 and -y·e^t/(1+e^t) for t < 0 (neither overflows),
    // with one e^-|t| (exp_nonpositive) and selects: the sign of t is random from row to row.
    const R t = -y * z;
    const bool positive = t >= R(0);
    const R e = exp_nonpositive(blend(positive, -t, t));
    return -y * (blend(positive, R(1), e) / (R(1) + e));
  } else if constexpr (L == Loss::linear) {
    return z - y;
  } else {
    return exp_vectorizable(z) - y;
  }
}

/// Run-time loss, for code outside the hot loops.
template <class R>
KOKKOS_INLINE_FUNCTION R loss_value(Loss loss, R z, R y) {
  switch (loss) {
    case Loss::logistic: return loss_value<Loss::logistic>(z, y);
    case Loss::linear: return loss_value<Loss::linear>(z, y);
    case Loss::poisson: return loss_value<Loss::poisson>(z, y);
  }
  return R(0);
}

template <class R>
KOKKOS_INLINE_FUNCTION R loss_derivative(Loss loss, R z, R y) {
  switch (loss) {
    case Loss::logistic: return loss_derivative<Loss::logistic>(z, y);
    case Loss::linear: return loss_derivative<Loss::linear>(z, y);
    case Loss::poisson: return loss_derivative<Loss::poisson>(z, y);
  }
  return R(0);
}

}  // namespace minisgd
