#pragma once
// Weight updates from a reduced gradient (docs/design.md): SGD, heavy-ball momentum, Adam.
//
// The optimizer receives the sum over the batch's rows of ∇ℓ, so the loss gradient is sum/b.
// L2 enters as the gradient of (λ/2)‖w‖², G = sum/b + λw, so all three minimize the same
// F(w). For SGD that is w ← ρw − (η/b)·sum with ρ = 1 − ηλ, the update of docs/design.md.
#include <memory>

#include "minisgd/config/config.hpp"
#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/state_archive.hpp"
#include "minisgd/solvers/stepper.hpp"

namespace minisgd {

template <class T>
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  /// w ← the optimizer's step for gradient sum `sum` over b rows, step size s.eta.
  virtual void update(const Vector<T>& w, const Vector<T>& sum, const StepSpec& s) = 0;
  /// Saves or restores what carries between steps (momentum; Adam's m, v and t).
  virtual void state(StateArchive& a) = 0;
};

/// The optimizer of c.solver for a weight vector of n entries, of which entry `free` (−1: none)
/// is an unregularized intercept (model.intercept: unregularized): L2 leaves it alone.
template <class T>
std::unique_ptr<Optimizer<T>> make_optimizer(const Config& c, std::size_t n,
                                             std::int64_t free = -1);

}  // namespace minisgd
