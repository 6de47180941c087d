#include "minisgd/solvers/evaluator.hpp"

#include "minisgd/comm/view_collectives.hpp"
#include "minisgd/core/ordered_sum.hpp"
#include "minisgd/kernels/glm_kernels.hpp"
#include "minisgd/kernels/objective.hpp"
#include "minisgd/kernels/sparse_kernels.hpp"
#include "minisgd/models/loss.hpp"

namespace minisgd {

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
      objective_margins(data_.X, first, w, zc);
    if (column) comm::allreduce(comm_, zc);
    total += loss_terms_sum(loss_, zc, data_.y, first, n);
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
