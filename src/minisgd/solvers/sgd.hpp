#pragma once
// Mini-batch SGD in either decomposition (docs/design.md). X is stored as S (double, float,
// bf16, fp16); margins, derivatives, gradient and weights are computed in A (double or float).
#include "minisgd/comm/communicator.hpp"
#include "minisgd/compress/compressor.hpp"
#include "minisgd/config/config.hpp"
#include "minisgd/data/dataset.hpp"
#include "minisgd/kernels/sparse_kernels.hpp"
#include "minisgd/report/timers.hpp"
#include "minisgd/solvers/averaging.hpp"
#include "minisgd/solvers/optimizer.hpp"
#include "minisgd/solvers/stepper.hpp"

namespace minisgd {

template <class S, class A>
class SgdStepper final : public Stepper {
 public:
  SgdStepper(const Config& c, const Dataset<S>& data, comm::Communicator& comm, Timers& timers);
  int group_size() const override { return 1; }
  void advance(const std::vector<StepSpec>& steps) override;
  Vector<double> local_weights() const override;
  void state(StateArchive& a) override;
  /// The gradient compressor in force and its parameters (row decomposition; else "none").
  nlohmann::json compression() const override;

 private:
  /// One step, each phase entered in `phases`; the last is "update".
  void step(const StepSpec& s, Timers::Sequence& phases);
  /// g_ from the `rows` local rows of a batch from local row `first`; z_ already holds their
  /// margins when margins_given.
  void gradient(std::int64_t first, std::int64_t rows, bool margins_given);
  /// A step of the lazily scaled form (lazy_).
  void lazy_step(const StepSpec& s, Timers::Sequence& phases);
  /// w_ ← scale_·w_, scale_ ← 1: the plain form, for checkpoints and tiny scales.
  void fold_scale();

  const Dataset<S>& data_;
  comm::Communicator& comm_;
  Timers& timers_;
  Loss loss_;
  std::int64_t local_batch_;  // rows of a whole batch held here (a short one holds fewer)
  Vector<A> w_, z_, u_, g_;
  Vector<A> reduced_;  // row decomposition: the compressor's estimate of Σ_ranks g_
  std::int64_t free_;  // local entry of an unregularized intercept held here (−1: none)
  std::unique_ptr<compress::Compressor<A>> compressor_;
  std::unique_ptr<Optimizer<A>> optimizer_;
  IterateAverage<A> average_;  // empty unless solver.averaging
  // A sparse share trained by plain SGD with nothing averaged and no d-vector communicated
  // (one rank, or the column decomposition) on a host backend keeps w = scale_·w_, with each
  // step's ρ folded into scale_, so a step costs O(nonzeros of the batch), not O(d), as in
  // scikit-learn's and Bottou's sparse SGD. With λ = 0 (ρ = 1) it is the plain step, bit for bit.
  bool lazy_ = false;
  A scale_ = A(1);
  // Any other step on a sparse share on a host backend keeps the columns of its batch: g is
  // nonzero on those alone, so the next step zeroes just them, and the compressor is told.
  TouchedColumns touched_;
  bool track_touched_ = false;
  std::int64_t batch_size_ = 0;
};

}  // namespace minisgd
