#include "minisgd/solvers/optimizer.hpp"

#include <cmath>

#include "minisgd/kernels/glm_kernels.hpp"

namespace minisgd {
namespace {

template <class T>
class Sgd final : public Optimizer<T> {
 public:
  Sgd(std::int64_t b, std::int64_t free) : b_(b), free_(free), kept_("intercept") {}
  void update(const Vector<T>& w, const Vector<T>& sum, const StepSpec& s) override {
    const T step = T(s.eta / double(b_));
    if (free_ < 0 || s.rho == 1.0) return sgd_update(w, sum, T(s.rho), step);
    // The unregularized intercept takes w ← w − (η/b)·g, without the shrink by ρ.
    const auto kept = kept_;
    const std::int64_t f = free_;
    Kokkos::parallel_for(
        "minisgd::keep_intercept", Kokkos::RangePolicy<ExecSpace>(0, 1),
        KOKKOS_LAMBDA(const int) { kept() = w(f); });
    sgd_update(w, sum, T(s.rho), step);
    Kokkos::parallel_for(
        "minisgd::intercept_update", Kokkos::RangePolicy<ExecSpace>(0, 1),
        KOKKOS_LAMBDA(const int) { w(f) = kept() - step * sum(f); });
  }
  void state(StateArchive&) override {}  // stateless

 private:
  std::int64_t b_;
  std::int64_t free_;
  Kokkos::View<T, MemSpace> kept_;
};

/// m ← μm + G, w ← w − ηm.
template <class T>
class Momentum final : public Optimizer<T> {
 public:
  Momentum(std::int64_t b, double l2, double mu, std::size_t n, std::int64_t free)
      : inv_b_(T(1.0 / double(b))), l2_(T(l2)), mu_(T(mu)), m_("momentum", n), free_(free) {}
  void update(const Vector<T>& w, const Vector<T>& sum, const StepSpec& s) override {
    const T inv_b = inv_b_, l2 = l2_, mu = mu_, eta = T(s.eta);
    const auto m = m_;
    const std::int64_t f = free_;
    Kokkos::parallel_for(
        "minisgd::momentum_update", Kokkos::RangePolicy<ExecSpace>(0, w.extent(0)),
        KOKKOS_LAMBDA(const std::int64_t i) {
          m(i) = mu * m(i) + (sum(i) * inv_b + (i == f ? T(0) : l2) * w(i));
          w(i) -= eta * m(i);
        });
  }
  void state(StateArchive& a) override { a.view("momentum", m_); }

 private:
  T inv_b_, l2_, mu_;
  Vector<T> m_;
  std::int64_t free_;  // the unregularized intercept's entry (−1: none)
};

/// Adam with bias correction: m ← β1·m + (1−β1)G, v ← β2·v + (1−β2)G²,
/// w ← w − η·m̂/(√v̂ + ε), m̂ = m/(1−β1^t), v̂ = v/(1−β2^t).
template <class T>
class Adam final : public Optimizer<T> {
 public:
  Adam(std::int64_t b, double l2, const AdamConfig& a, std::size_t n, std::int64_t free)
      : inv_b_(T(1.0 / double(b))),
        l2_(T(l2)),
        a_(a),
        m_("adam_m", n),
        v_("adam_v", n),
        free_(free) {}
  void update(const Vector<T>& w, const Vector<T>& sum, const StepSpec& s) override {
    ++t_;
    const T inv_b = inv_b_, l2 = l2_, eta = T(s.eta);
    const T b1 = T(a_.beta1), b2 = T(a_.beta2), eps = T(a_.epsilon);
    const T c1 = T(1.0 / (1.0 - std::pow(a_.beta1, double(t_))));
    const T c2 = T(1.0 / (1.0 - std::pow(a_.beta2, double(t_))));
    const auto m = m_, v = v_;
    const std::int64_t f = free_;
    Kokkos::parallel_for(
        "minisgd::adam_update", Kokkos::RangePolicy<ExecSpace>(0, w.extent(0)),
        KOKKOS_LAMBDA(const std::int64_t i) {
          using std::sqrt;
          const T g = sum(i) * inv_b + (i == f ? T(0) : l2) * w(i);
          m(i) = b1 * m(i) + (T(1) - b1) * g;
          v(i) = b2 * v(i) + (T(1) - b2) * g * g;
          w(i) -= eta * (m(i) * c1) / (sqrt(v(i) * c2) + eps);
        });
  }
  void state(StateArchive& a) override {
    a.view("adam.m", m_);
    a.view("adam.v", v_);
    a.value("adam.t", t_);
  }

 private:
  T inv_b_, l2_;
  AdamConfig a_;
  Vector<T> m_, v_;
  std::int64_t t_ = 0;
  std::int64_t free_;
};

}  // namespace

template <class T>
std::unique_ptr<Optimizer<T>> make_optimizer(const Config& c, std::size_t n, std::int64_t free) {
  const std::int64_t b = c.solver.batch_size;
  switch (c.solver.optimizer) {
    case OptimizerKind::sgd: return std::make_unique<Sgd<T>>(b, free);
    case OptimizerKind::momentum:
      return std::make_unique<Momentum<T>>(b, c.model.l2, c.solver.momentum, n, free);
    case OptimizerKind::adam:
      return std::make_unique<Adam<T>>(b, c.model.l2, c.solver.adam, n, free);
  }
  return nullptr;
}

template std::unique_ptr<Optimizer<float>> make_optimizer<float>(const Config&, std::size_t,
                                                                 std::int64_t);
template std::unique_ptr<Optimizer<double>> make_optimizer<double>(const Config&, std::size_t,
                                                                   std::int64_t);

}  // namespace minisgd
