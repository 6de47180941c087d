#pragma once
// The full training objective F(w) = (1/m) Σ ℓ(x_i·w; y_i) + (λ/2)‖w‖², evaluated in FP64
// over every row whatever the training precision (an unregularized intercept is left out of
// ‖w‖²). Collective over the evaluation communicator.
#include "minisgd/comm/communicator.hpp"
#include "minisgd/config/config.hpp"
#include "minisgd/data/dataset.hpp"

namespace minisgd {

template <class T>
class Evaluator {
 public:
  Evaluator(const Config& c, const Dataset<T>& data, comm::Communicator& comm);
  /// The objective over a part of the rows: the first `local_rows` local rows, `rows` of them
  /// over all ranks (the sample of solvers/step_probe.hpp).
  Evaluator(const Config& c, const Dataset<T>& data, comm::Communicator& comm,
            std::int64_t local_rows, std::int64_t rows);
  /// F at the given local weights (this rank's slice in the column decomposition).
  double objective(const Vector<double>& w_local) const;
  /// Mean loss only (no regularization), e.g. for a test set.
  double mean_loss(const Vector<double>& w_local) const;

 private:
  double loss_total(const Vector<double>& w_local) const;

  const Dataset<T>& data_;
  comm::Communicator& comm_;
  Loss loss_;
  double l2_;
  std::int64_t local_rows_, rows_;
  std::int64_t free_;  // local entry of an unregularized intercept, outside the L2 term (−1)
};

}  // namespace minisgd
