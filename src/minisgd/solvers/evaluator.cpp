#include "minisgd/solvers/evaluator.hpp"

#include <KokkosBlas1_dot.hpp>

#include "minisgd/comm/view_collectives.hpp"
#include "minisgd/kernels/glm_kernels.hpp"

namespace minisgd {

template <class T>
Evaluator<T>::Evaluator(const Config& c, const Dataset<T>& data, comm::Communicator& comm)
    : data_(data), comm_(comm), loss_(c.model.loss), l2_(c.model.l2) {}

template <class T>
double Evaluator<T>::loss_total(const Vector<double>& w) const {
  if (data_.part.decomposition == Decomposition::row)
    return comm_.allreduce_value(loss_sum(loss_, data_.X, data_.y, w));
  // Column: sum the partial margins of every rank, a chunk of rows at a time.
  const std::int64_t m = data_.X.extent(0), chunk = 1 << 16;
  Vector<double> z("z_eval", chunk < m ? chunk : m);
  double total = 0;
  for (std::int64_t first = 0; first < m; first += chunk) {
    const std::int64_t n = (m - first < chunk) ? m - first : chunk;
    const auto zc = range(z, 0, n);
    margins_fp64(row_block(data_.X, first, n), w, zc);
    comm::allreduce(comm_, zc);
    total += loss_sum_of_margins(loss_, zc, range(data_.y, first, n));
  }
  return total;
}

template <class T>
double Evaluator<T>::mean_loss(const Vector<double>& w) const {
  return loss_total(w) / double(data_.part.rows);
}

template <class T>
double Evaluator<T>::objective(const Vector<double>& w) const {
  double norm2 = KokkosBlas::dot(w, w);
  if (data_.part.decomposition == Decomposition::column) norm2 = comm_.allreduce_value(norm2);
  return mean_loss(w) + 0.5 * l2_ * norm2;
}

template class Evaluator<float>;
template class Evaluator<double>;
template class Evaluator<precision::bf16>;
template class Evaluator<precision::fp16>;

}  // namespace minisgd
