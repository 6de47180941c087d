#include "minisgd/solvers/sgd.hpp"

#include "minisgd/comm/view_collectives.hpp"
#include "minisgd/kernels/glm_kernels.hpp"

namespace minisgd {

template <class T>
SgdStepper<T>::SgdStepper(const Config& c, const Dataset<T>& data, comm::Communicator& comm,
                          Timers& timers)
    : data_(data),
      comm_(comm),
      timers_(timers),
      loss_(c.model.loss),
      local_batch_(data.part.local_batch(c.solver.batch_size)),
      w_("w", data.part.local_cols()),
      z_("z", local_batch_),
      u_("u", local_batch_),
      g_("g", data.part.local_cols()),
      optimizer_(make_optimizer<T>(c, std::size_t(data.part.local_cols()))) {
  if (data.part.decomposition == Decomposition::row) {
    reduced_ = Vector<T>("g_reduced", data.part.local_cols());
    compressor_ = compress::make_compressor<T>(c.compression, c.run.seed,
                                               std::size_t(data.part.local_cols()), comm);
  }
}

template <class T>
nlohmann::json SgdStepper<T>::compression() const {
  return compressor_ ? compressor_->describe() : nlohmann::json{{"method", "none"}};
}

template <class T>
void SgdStepper<T>::advance(const std::vector<StepSpec>& steps) {
  for (const StepSpec& s : steps) step(s);
}

template <class T>
void SgdStepper<T>::step(const StepSpec& s) {
  const std::int64_t first = s.batch * local_batch_;
  const Matrix<T> Xb = row_block(data_.X, first, local_batch_);
  const bool row = data_.part.decomposition == Decomposition::row;
  {
    auto t = timers_.scope("margins");
    batch_margins(Xb, w_, z_);
  }
  if (!row) {  // column: a margin is the sum of every rank's partial dot product
    auto t = timers_.scope("allreduce");
    comm::allreduce(comm_, z_);
  }
  {
    auto t = timers_.scope("gradient");
    loss_derivatives(loss_, z_, range(data_.y, first, local_batch_), u_);
    batch_gradient(Xb, u_, g_);
  }
  if (row) {  // row: every rank's rows contribute to the whole gradient
    auto t = timers_.scope("allreduce");
    compressor_->reduce(g_, reduced_);
  }
  auto t = timers_.scope("update");
  optimizer_->update(w_, row ? reduced_ : g_, s);
}

template <class T>
Vector<double> SgdStepper<T>::local_weights() const {
  Vector<double> w("w_fp64", w_.extent(0));
  convert_copy(w_, w);
  return w;
}

template class SgdStepper<float>;
template class SgdStepper<double>;

}  // namespace minisgd
