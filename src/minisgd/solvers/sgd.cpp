#include "minisgd/solvers/sgd.hpp"

#include <KokkosBlas1_scal.hpp>

#include <nlohmann/json.hpp>

#include "minisgd/comm/view_collectives.hpp"
#include "minisgd/core/huge_pages.hpp"
#include "minisgd/kernels/glm_kernels.hpp"
#include "minisgd/kernels/sgd_kernels.hpp"
#include "minisgd/kernels/sparse_kernels.hpp"

namespace minisgd {

template <class S, class A>
SgdStepper<S, A>::SgdStepper(const Config& c, const Dataset<S>& data, comm::Communicator& comm,
                             Timers& timers)
    : data_(data),
      comm_(comm),
      timers_(timers),
      loss_(c.model.loss),
      local_batch_(data.part.local_batch()),
      z_("z", local_batch_),
      u_("u", local_batch_),
      free_(c.model.free_intercept() ? data.part.local_col(data.part.cols - 1) : -1),
      optimizer_(make_optimizer<A>(c, std::size_t(data.part.local_cols()), free_)) {
  if (c.solver.averaging != Averaging::none) average_ = IterateAverage<A>(data.part.local_cols());
  batch_size_ = c.solver.batch_size;
  lazy_ = kHostMemory && data.sparse() && c.solver.optimizer == OptimizerKind::sgd &&
          c.solver.averaging == Averaging::none &&
          (data.part.decomposition == Decomposition::column ||
           (comm.size() == 1 && c.compression.method == CompressionMethod::none));
  // Sparse steps gather and scatter w and g at random columns: 2 MiB pages spare the TLB.
  const auto vector = [&](const std::string& label) {
    const std::int64_t n = data.part.local_cols();
    return data.sparse() ? zeroed_in_huge_pages<Vector<A>>(label, n) : Vector<A>(label, n);
  };
  w_ = vector("w");
  if (!lazy_) g_ = vector("g");  // the lazy step applies its gradient as it forms
  track_touched_ = kHostMemory && data.sparse() && !lazy_;
  if (track_touched_) touched_ = TouchedColumns(data.part.local_cols());
  if (data.part.decomposition == Decomposition::row) {
    reduced_ = Vector<A>("g_reduced", data.part.local_cols());
    compressor_ = compress::make_compressor<A>(c.compression, c.run.seed,
                                               std::size_t(data.part.local_cols()), comm);
  }
}

template <class S, class A>
nlohmann::json SgdStepper<S, A>::compression() const {
  return compressor_ ? compressor_->describe() : nlohmann::json{{"method", "none"}};
}

template <class S, class A>
void SgdStepper<S, A>::advance(const std::vector<StepSpec>& steps) {
  Timers::Sequence phases(timers_);
  for (const StepSpec& s : steps) {
    step(s, phases);
    average_.add(w_, s.average);  // in the step's last phase, "update"
  }
}

template <class S, class A>
void SgdStepper<S, A>::gradient(std::int64_t first, std::int64_t rows, bool margins_given) {
  if (track_touched_) {
    if constexpr (kHostMemory) {
      for (const std::int32_t c : touched_.columns()) g_(c) = A(0);  // all of g that is not 0
      if (rows > 0)
        touched_.collect(data_.csr, first, rows);
      else
        touched_.clear();
    }
  }
  if (rows == 0) {  // b < P, or a short batch: this rank holds no row of the batch
    if (!track_touched_) Kokkos::deep_copy(g_, A(0));
    return;
  }
  const Vector<A> z = range(z_, 0, rows), u = range(u_, 0, rows);
  with_loss(loss_, [&](auto loss) {
    constexpr Loss L = decltype(loss)::value;
    if (data_.sparse())
      csr_gradient<L>(data_.csr, first, data_.y, w_, z, margins_given, u, g_, track_touched_);
    else
      sgd_gradient<L>(data_.X, first, data_.y, w_, z, margins_given, u, g_);
  });
}

// Kernel launches per step on a host backend: none for a batch or a vector under 256 KB
// (core/launch.hpp); else one each for the partial margins (column decomposition), the fused
// pass, the compressor's kernels (row) and the update, and the AllReduce between them.
template <class S, class A>
void SgdStepper<S, A>::step(const StepSpec& s, Timers::Sequence& phases) {
  if (lazy_) return lazy_step(s, phases);
  const std::int64_t first = data_.part.batch_first(s.batch);
  const std::int64_t rows = data_.part.batch_rows(s.batch);
  if (data_.part.decomposition == Decomposition::row) {
    phases.enter("gradient");
    gradient(first, rows, false);
    phases.enter("allreduce");  // every rank's rows contribute to the whole gradient
    compressor_->set_epoch(s.epoch);
    if (track_touched_)
      compressor_->set_touched(touched_.columns().data(), std::int64_t(touched_.columns().size()));
    compressor_->reduce(g_, reduced_);
    phases.enter("update");
    optimizer_->update(w_, reduced_, s);
    return;
  }
  phases.enter("margins");
  const Vector<A> z = range(z_, 0, rows);
  if (data_.sparse())
    csr_margins(data_.csr, first, w_, z);
  else
    sgd_margins(data_.X, first, w_, z);
  phases.enter("allreduce");  // a margin is the sum of every rank's partial dot product
  comm::allreduce(comm_, z);
  phases.enter("gradient");
  gradient(first, rows, true);
  phases.enter("update");
  optimizer_->update(w_, g_, s);
}

template <class S, class A>
void SgdStepper<S, A>::lazy_step(const StepSpec& s, Timers::Sequence& phases) {
  if constexpr (kHostMemory) {
    const std::int64_t first = data_.part.batch_first(s.batch);
    const Vector<A> z = range(z_, 0, data_.part.batch_rows(s.batch)), u = range(u_, 0, z.extent(0));
    const bool column = data_.part.decomposition == Decomposition::column;
    if (column)
      phases.enter("margins");
    else
      phases.enter("gradient");
    csr_margins_prefetched(data_.csr, first, w_, scale_, z);  // x·w = scale·(x·v)
    if (column) {
      phases.enter("allreduce");
      comm::allreduce(comm_, z);
    }
    // w' = ρ·w − (η/b)·g: scale' = ρ·scale, v' = v − (η/b)/scale'·g on the batch's columns.
    if (A(s.rho) * scale_ < A(1e-20)) fold_scale();  // before the scale underflows
    scale_ = A(s.rho) * scale_;
    if (free_ >= 0) w_.data()[free_] /= A(s.rho);  // an unregularized intercept keeps its value
    const A step = A(s.eta / double(batch_size_)) / scale_;
    phases.enter("update");  // the derivatives and the update, fused
    with_loss(loss_, [&](auto loss) {
      csr_direct_update<decltype(loss)::value>(data_.csr, first, data_.y, z, u, w_, step);
    });
  }
}

template <class S, class A>
void SgdStepper<S, A>::fold_scale() {
  if (scale_ == A(1)) return;
  KokkosBlas::scal(w_, scale_, w_);
  scale_ = A(1);
}

template <class S, class A>
void SgdStepper<S, A>::state(StateArchive& a) {
  fold_scale();  // a checkpoint holds w itself
  a.view("sgd.w", w_);
  optimizer_->state(a);
  if (compressor_) compressor_->state(a);
  average_.state(a);
}

template <class S, class A>
Vector<double> SgdStepper<S, A>::local_weights() const {
  Vector<double> w("w_fp64", w_.extent(0));
  convert_copy(average_.started() ? average_.value() : w_, w);
  if (scale_ != A(1)) {  // the lazily scaled form: w = scale·v, as fold_scale rounds it
    Vector<A> folded("w_folded", w_.extent(0));
    KokkosBlas::scal(folded, scale_, w_);
    convert_copy(folded, w);
  }
  return w;
}

template class SgdStepper<double, double>;
template class SgdStepper<float, float>;
template class SgdStepper<precision::bf16, float>;
template class SgdStepper<precision::fp16, float>;
template class SgdStepper<float, double>;
template class SgdStepper<precision::bf16, double>;
template class SgdStepper<precision::fp16, double>;

}  // namespace minisgd
