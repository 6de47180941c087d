#pragma once
// Communication-avoiding (s-step) SGD in the column decomposition (docs/ca_sgd.md):
// one AllReduce of the packed [strictly block-lower Gram, partial margins] per outer step of
// up to s inner steps, the inner recurrence redundantly on every rank, and a local update.
//
// S is the storage type of X, A the arithmetic type; the other precision knobs are chosen at
// run time from the plan (precision/plan.hpp says which are native and which emulated).
#include <tuple>
#include <vector>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/config/config.hpp"
#include "minisgd/data/dataset.hpp"
#include "minisgd/kernels/ca_sgd_kernels.hpp"
#include "minisgd/kernels/ca_sgd_sparse_kernels.hpp"
#include "minisgd/kernels/gram/gram.hpp"
#include "minisgd/precision/plan.hpp"
#include "minisgd/report/timers.hpp"
#include "minisgd/solvers/averaging.hpp"
#include "minisgd/solvers/stepper.hpp"

namespace minisgd {

template <class S, class A>
class CaSgdStepper final : public Stepper {
 public:
  CaSgdStepper(const Config& c, const Dataset<S>& data, comm::Communicator& comm, Timers& timers);
  int group_size() const override { return s_; }
  void advance(const std::vector<StepSpec>& steps) override;
  Vector<double> local_weights() const override;
  void state(StateArchive& a) override;
  /// Sums the zeros of packed_ twice for each size (the first outer step overwrites them).
  void warm_up(const std::vector<int>& group_sizes) override;

  /// Numbers in the packed message of an outer step of `steps` inner steps of `rows` rows.
  std::int64_t message_size(int steps, std::int64_t rows) const {
    return gram_packed_size(steps, rows) + steps * rows;
  }
  std::int64_t message_size(int steps) const { return message_size(steps, rows_); }
  /// {"gram": the path that formed the Gram (none while no outer step had two steps), and
  /// for oneDNN its implementation, or "gram_fallback": why oneDNN did not form a bf16 Gram}.
  nlohmann::json kernels() const override;
  /// Public only because CUDA forbids KOKKOS_LAMBDAs in private or protected member functions.
  template <class W>
  void exchange_as(std::int64_t count);

 private:
  /// One outer step: `steps` inner steps on batches of `rows` rows (b, or the short batch's).
  void outer_step(const std::vector<StepSpec>& steps, std::int64_t rows);
  void set_up_step(const std::vector<StepSpec>& steps);
  void form_gram(int steps);
  /// The Gram of a sparse share's outer step: its rows gathered, then merged pair by pair.
  void form_sparse_gram(int steps);
  /// r = Y·w of the outer step's rows, dense or sparse.
  void margins(int steps);
  /// w_out ← scale·w_out − Yᵀv over the outer step's rows (update_weights, dense or sparse).
  void update(int steps, const Vector<A>& v, double scale, const precision::Rounder& weights,
              std::uint64_t step, const Vector<A>& w_out);
  template <class In>
  void form_gram_from(int steps);
  void exchange(int steps);
  /// The format the message of an outer step of `steps` steps travels in.
  precision::Format message_format(int steps) const {
    return steps > 1 ? real_.wire : real_.margins_wire;
  }
  /// The AllReduce of that message, in that format.
  void sum_message(int steps);
  void average(const std::vector<StepSpec>& steps);

  const Dataset<S>& data_;
  comm::Communicator& comm_;
  Timers& timers_;
  Loss loss_;
  int s_;
  std::int64_t b_;     // rows of a whole batch: every step's update weighs a row by η/b
  std::int64_t rows_;  // rows of each batch of the outer step in progress (b_ or fewer)
  precision::Plan plan_;
  precision::Realization real_;
  // One rounding per knob, relative to the type its values are computed in.
  precision::Rounder gram_input_, gram_accum_, gram_wire_, margin_accum_, margin_wire_, recurrence_,
      gradient_accum_, weights_;

  Vector<A> w_;
  Vector<A> gradient_;  // Yᵀv of an outer step (update_weights' workspace)
  Vector<A> packed_;    // [G (strictly block-lower, by block rows) | r], the message in A
  Vector<A> u_, v_;     // ℓ' of every inner step; coefficient-weighted ℓ' for the update
  BatchRows first_;     // first local row of each batch of the outer step
  typename BatchRows::HostMirror first_host_;
  Coefficients coef_;
  Kokkos::View<double**, Kokkos::LayoutRight, HostSpace> coef_host_;
  Kokkos::View<double*, HostSpace> scale_host_;
  std::vector<double> eta_, rho_;  // η and ρ of the outer step's inner steps (host)
  IterateAverage<A> average_;      // empty unless solver.averaging
  Vector<A> u_average_;      // κ_i·ℓ' of every inner step: the average's share of the update
  bool adjacent_ = false;    // this outer step's batches are consecutive rows of X
  std::uint64_t outer_ = 0;  // outer steps taken: keys stochastic rounding

  BlockLowerGram gram_;
  GramPath gram_path_ = GramPath::none;
  // The Gram input and wire buffers of the types in use (the others stay empty).
  std::tuple<Matrix<double>, Matrix<float>, Matrix<precision::bf16>, Matrix<precision::fp16>>
      input_;
  std::tuple<Vector<double>, Vector<float>, Vector<precision::bf16>, Vector<precision::fp16>> wire_;
  GatheredRows<A> gathered_;  // a sparse share's outer-step rows for the Gram (else empty)
};

}  // namespace minisgd
