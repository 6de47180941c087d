#pragma once
// Mini-batch SGD in either decomposition (docs/design.md), in the precision of T.
#include "minisgd/comm/communicator.hpp"
#include "minisgd/compress/compressor.hpp"
#include "minisgd/config/config.hpp"
#include "minisgd/data/dataset.hpp"
#include "minisgd/report/timers.hpp"
#include "minisgd/solvers/optimizer.hpp"
#include "minisgd/solvers/stepper.hpp"

namespace minisgd {

template <class T>
class SgdStepper final : public Stepper {
 public:
  SgdStepper(const Config& c, const Dataset<T>& data, comm::Communicator& comm, Timers& timers);
  int group_size() const override { return 1; }
  void advance(const std::vector<StepSpec>& steps) override;
  Vector<double> local_weights() const override;
  /// The gradient compressor in force and its parameters (row decomposition; else "none").
  nlohmann::json compression() const override;

 private:
  void step(const StepSpec& s);

  const Dataset<T>& data_;
  comm::Communicator& comm_;
  Timers& timers_;
  Loss loss_;
  std::int64_t local_batch_;  // rows of a batch held here
  Vector<T> w_, z_, u_, g_;
  Vector<T> reduced_;  // row decomposition: the compressor's estimate of Σ_ranks g_
  std::unique_ptr<compress::Compressor<T>> compressor_;
  std::unique_ptr<Optimizer<T>> optimizer_;
};

}  // namespace minisgd
