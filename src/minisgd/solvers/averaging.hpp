#pragma once
// Iterate averaging (solver.averaging, docs/input_deck.md): the running mean w̄ of the
// iterates after every step from the averaging start on, w̄ ← (1 − a)·w̄ + a·w with a = 1/k
// for the k-th averaged iterate. While it is on, w̄ is what the objective, the verdict and
// output.weights use. SGD adds each iterate as it comes; CA-SGD folds the iterates of an outer
// step into w̄ from the same recurrence (average_coefficients), without communication.
#include <cstdint>
#include <vector>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/state_archive.hpp"
#include "minisgd/solvers/stepper.hpp"

namespace minisgd {

template <class A>
class IterateAverage {
 public:
  IterateAverage() = default;
  explicit IterateAverage(std::int64_t n) : avg_("w_average", n) {}

  /// w̄ ← (1 − a)·w̄ + a·w (a = 0: unchanged).
  void add(const Vector<A>& w, double a) {
    if (a <= 0) return;
    started_ = true;
    const auto avg = avg_;
    const A keep = A(1.0 - a), take = A(a);
    Kokkos::parallel_for(
        "minisgd::average_iterate", Kokkos::RangePolicy<ExecSpace>(0, avg.extent(0)),
        KOKKOS_LAMBDA(const std::int64_t i) { avg(i) = keep * avg(i) + take * w(i); });
  }

  /// w̄ ← keep·w̄ + take·w: the part of an outer step's update that does not read X.
  void scale_and_add(const Vector<A>& w, double keep, double take) {
    started_ = true;
    const auto avg = avg_;
    const A k = A(keep), t = A(take);
    Kokkos::parallel_for(
        "minisgd::average_outer_step", Kokkos::RangePolicy<ExecSpace>(0, avg.extent(0)),
        KOKKOS_LAMBDA(const std::int64_t i) { avg(i) = k * avg(i) + t * w(i); });
  }

  bool started() const { return started_; }
  void state(StateArchive& a) {
    a.value("average.started", started_);
    a.view("average", avg_);
  }
  const Vector<A>& value() const { return avg_; }

 private:
  Vector<A> avg_;
  bool started_ = false;
};

/// How an outer step of inner steps j = 0..n−1 with iterates w_{j+1} = c_{j+1}·w_0 −
/// Σ_{i≤j} coef(j+1, i)·X_iᵀu_i moves w̄ (a_j = steps[j].average):
///   w̄ ← keep·w̄ + take·w_0 − Σ_i kappa_i·X_iᵀu_i,
/// keep = Π_j (1 − a_j), γ_j = a_j·Π_{l>j} (1 − a_l), take = Σ_j γ_j·c_{j+1},
/// kappa_i = Σ_{j≥i} γ_j·coef(j+1, i). `scale(j)` = c_j and `coef(j, i)` as in
/// kernels/ca_sgd_kernels.hpp (host views).
struct OuterAverage {
  double keep = 1, take = 0;
  std::vector<double> kappa;
  bool any = false;  // some inner step is averaged
};

template <class Coef, class Scale>
OuterAverage average_coefficients(const std::vector<StepSpec>& steps, const Coef& coef,
                                  const Scale& scale) {
  const int n = int(steps.size());
  OuterAverage o;
  o.kappa.assign(std::size_t(n), 0.0);
  double later = 1;  // Π_{l>j} (1 − a_l)
  for (int j = n - 1; j >= 0; --j) {
    const double a = steps[std::size_t(j)].average;
    if (a > 0) o.any = true;
    const double gamma = a * later;
    o.take += gamma * scale(j + 1);
    for (int i = 0; i <= j; ++i) o.kappa[std::size_t(i)] += gamma * coef(j + 1, i);
    later *= 1.0 - a;
  }
  o.keep = later;
  return o;
}

/// out(q) = factor[q / b]·u(q) for the n·b derivatives of an outer step.
template <class A>
void scale_by_step(const Vector<A>& u, const std::vector<double>& factor, std::int64_t b, int n,
                   const Vector<A>& out) {
  Kokkos::View<const double*, HostSpace> host(factor.data(), factor.size());
  const auto f = Kokkos::create_mirror_view_and_copy(MemSpace(), host);
  Kokkos::parallel_for(
      "minisgd::average_derivatives", Kokkos::RangePolicy<ExecSpace>(0, n * b),
      KOKKOS_LAMBDA(const std::int64_t q) { out(q) = A(f(q / b)) * u(q); });
}

}  // namespace minisgd
