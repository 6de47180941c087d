#include "minisgd/solvers/evaluator.hpp"

#include "minisgd/comm/view_collectives.hpp"
#include "minisgd/core/ordered_sum.hpp"
#include "minisgd/kernels/glm_kernels.hpp"
#include "minisgd/kernels/sgd_host_rows.hpp"
#include "minisgd/kernels/sparse_kernels.hpp"
#include "minisgd/models/loss.hpp"

namespace minisgd {
namespace {

// Every sum here has an order fixed by the data alone (a margin in the SGD margin's order,
// ordered_sum over rows), so F(w) is bitwise the same for any thread count.

/// Rows per host work item of the margins.
constexpr std::int64_t kEvalRows = 256;

/// z_i = Σ_j X(first+i, j)·w(j) in FP64 for i < z.extent(0), in kLanes interleaved partial sums
/// and a fixed tree (sgd_detail::row_dot): on host backends the vectorized loops of the SGD
/// margins over blocks of rows, bit for bit row_dot's sums (test_sgd_host_rows). One chain of
/// additions from the first column to the last, as before, ran at the latency of an addition:
/// the evaluation then took several times an epoch's training (docs/performance.md).
template <class T>
void margins_in_order(const Matrix<T>& X, std::int64_t first, const Vector<double>& w,
                      const Vector<double>& z) {
  const int cols = int(X.extent(1));
  const std::int64_t rows = z.extent(0);
  if constexpr (kHostMemory) {
    Kokkos::parallel_for(
        "minisgd::eval_margins",
        Kokkos::RangePolicy<ExecSpace>(0, (rows + kEvalRows - 1) / kEvalRows),
        KOKKOS_LAMBDA(const std::int64_t k) {
          const std::int64_t r0 = k * kEvalRows, n = kmin(kEvalRows, rows - r0);
          sgd_detail::rows_dot(&X(first + r0, 0), cols, w.data(), cols, n, &z(r0));
        });
  } else {
    Kokkos::parallel_for(
        "minisgd::eval_margins", Kokkos::RangePolicy<ExecSpace>(0, rows),
        KOKKOS_LAMBDA(const std::int64_t i) {
          z(i) = sgd_detail::row_dot(&X(first + i, 0), w.data(), cols);
        });
  }
}

/// z_i ← ℓ(z_i; y_{first+i}) for i < n on host backends, a block of rows at a time in a loop
/// the compiler vectorizes (loss_value is branch-free for the logistic and linear losses).
template <Loss L>
void losses_over_margins(const Vector<double>& z, const Vector<double>& y, std::int64_t first,
                         std::int64_t n) {
  constexpr std::int64_t block = 1024;
  Kokkos::parallel_for(
      "minisgd::eval_loss_terms", Kokkos::RangePolicy<ExecSpace>(0, (n + block - 1) / block),
      KOKKOS_LAMBDA(const std::int64_t b) {
        double* const zb = z.data() + b * block;
        const double* const yb = y.data() + first + b * block;
        const std::int64_t count = kmin(block, n - b * block);
        for (std::int64_t i = 0; i < count; ++i) zb[i] = loss_value<L>(zb[i], yb[i]);
      });
}

/// Σ_i ℓ(z_i; y_{first+i}) for i < n in ordered_sum's order; on host backends the losses are
/// first written over z (losses_over_margins), then summed: the same terms in the same order.
double loss_in_order(Loss loss, const Vector<double>& z, const Vector<double>& y,
                     std::int64_t first, std::int64_t n) {
  if constexpr (kHostMemory) {
    with_loss(loss, [&](auto l) { losses_over_margins<decltype(l)::value>(z, y, first, n); });
    return ordered_sum(
        "minisgd::eval_loss", n, KOKKOS_LAMBDA(const std::int64_t i) { return z(i); });
  } else {
    return ordered_sum(
        "minisgd::eval_loss", n, KOKKOS_LAMBDA(const std::int64_t i) {
          return loss_value<double>(loss, z(i), y(first + i));
        });
  }
}

}  // namespace

template <class T>
Evaluator<T>::Evaluator(const Config& c, const Dataset<T>& data, comm::Communicator& comm)
    : Evaluator(c, data, comm, data.part.local_rows(), data.part.rows) {}

template <class T>
Evaluator<T>::Evaluator(const Config& c, const Dataset<T>& data, comm::Communicator& comm,
                        std::int64_t local_rows, std::int64_t rows)
    : data_(data),
      comm_(comm),
      loss_(c.model.loss),
      l2_(c.model.l2),
      local_rows_(local_rows),
      rows_(rows),
      free_(c.model.free_intercept() ? data.part.local_col(data.part.cols - 1) : -1) {}

template <class T>
double Evaluator<T>::loss_total(const Vector<double>& w) const {
  // A chunk of rows at a time; in the column decomposition the partial margins of every rank
  // are summed first.
  const bool column = data_.part.decomposition == Decomposition::column;
  const std::int64_t m = local_rows_, chunk = 1 << 16;
  Vector<double> z("z_eval", chunk < m ? chunk : m);
  double total = 0;
  for (std::int64_t first = 0; first < m; first += chunk) {
    const std::int64_t n = (m - first < chunk) ? m - first : chunk;
    const auto zc = range(z, 0, n);
    if (data_.sparse())
      csr_margins(data_.csr, first, w, zc);
    else
      margins_in_order(data_.X, first, w, zc);
    if (column) comm::allreduce(comm_, zc);
    total += loss_in_order(loss_, zc, data_.y, first, n);
  }
  return column ? total : comm_.allreduce_value(total);
}

template <class T>
double Evaluator<T>::mean_loss(const Vector<double>& w) const {
  return loss_total(w) / double(rows_);
}

template <class T>
double Evaluator<T>::objective(const Vector<double>& w) const {
  const std::int64_t free = free_;
  double norm2 = ordered_sum(
      "minisgd::eval_norm", w.extent(0),
      KOKKOS_LAMBDA(const std::int64_t j) { return j == free ? 0.0 : w(j) * w(j); });
  if (data_.part.decomposition == Decomposition::column) norm2 = comm_.allreduce_value(norm2);
  return mean_loss(w) + 0.5 * l2_ * norm2;
}

template class Evaluator<float>;
template class Evaluator<double>;
template class Evaluator<precision::bf16>;
template class Evaluator<precision::fp16>;

}  // namespace minisgd
