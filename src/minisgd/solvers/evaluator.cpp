#include "minisgd/solvers/evaluator.hpp"

#include "minisgd/comm/view_collectives.hpp"
#include "minisgd/core/ordered_sum.hpp"
#include "minisgd/kernels/glm_kernels.hpp"

namespace minisgd {
namespace {

// Every sum here has an order fixed by the data alone (one thread per row, columns left to
// right; ordered_sum over rows), so F(w) is bitwise the same for any thread count.

/// z_i = Σ_j X(first+i, j)·w(j) in FP64 for i < z.extent(0).
template <class T>
void margins_in_order(const Matrix<T>& X, std::int64_t first, const Vector<double>& w,
                      const Vector<double>& z) {
  const std::int64_t cols = X.extent(1);
  Kokkos::parallel_for(
      "minisgd::eval_margins", Kokkos::RangePolicy<ExecSpace>(0, z.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i) {
        double s = 0;
        for (std::int64_t j = 0; j < cols; ++j) s += precision::to_double(X(first + i, j)) * w(j);
        z(i) = s;
      });
}

template <class YView>
double loss_in_order(Loss loss, const Vector<double>& z, const YView& y, std::int64_t first,
                     std::int64_t n) {
  return ordered_sum(
      "minisgd::eval_loss", n,
      KOKKOS_LAMBDA(const std::int64_t i) { return loss_value<double>(loss, z(i), y(first + i)); });
}

}  // namespace

template <class T>
Evaluator<T>::Evaluator(const Config& c, const Dataset<T>& data, comm::Communicator& comm)
    : data_(data), comm_(comm), loss_(c.model.loss), l2_(c.model.l2) {}

template <class T>
double Evaluator<T>::loss_total(const Vector<double>& w) const {
  // A chunk of rows at a time; in the column decomposition the partial margins of every rank
  // are summed first.
  const bool column = data_.part.decomposition == Decomposition::column;
  const std::int64_t m = data_.X.extent(0), chunk = 1 << 16;
  Vector<double> z("z_eval", chunk < m ? chunk : m);
  double total = 0;
  for (std::int64_t first = 0; first < m; first += chunk) {
    const std::int64_t n = (m - first < chunk) ? m - first : chunk;
    const auto zc = range(z, 0, n);
    margins_in_order(data_.X, first, w, zc);
    if (column) comm::allreduce(comm_, zc);
    total += loss_in_order(loss_, zc, data_.y, first, n);
  }
  return column ? total : comm_.allreduce_value(total);
}

template <class T>
double Evaluator<T>::mean_loss(const Vector<double>& w) const {
  return loss_total(w) / double(data_.part.rows);
}

template <class T>
double Evaluator<T>::objective(const Vector<double>& w) const {
  double norm2 = ordered_sum(
      "minisgd::eval_norm", w.extent(0),
      KOKKOS_LAMBDA(const std::int64_t j) { return w(j) * w(j); });
  if (data_.part.decomposition == Decomposition::column) norm2 = comm_.allreduce_value(norm2);
  return mean_loss(w) + 0.5 * l2_ * norm2;
}

template class Evaluator<float>;
template class Evaluator<double>;
template class Evaluator<precision::bf16>;
template class Evaluator<precision::fp16>;

}  // namespace minisgd
