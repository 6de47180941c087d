#pragma once
// What the training loop drives: a method that advances the weights over a run of steps.
#include <cstdint>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/state_archive.hpp"

namespace minisgd {

/// One SGD step: the global batch it uses, its step size η, its shrink factor ρ = 1 − ηλ, the
/// weight a of its iterate in the running average w̄ ← (1 − a)·w̄ + a·w (0: not averaged;
/// solvers/averaging.hpp) and its epoch.
struct StepSpec {
  std::int64_t batch;
  double eta;
  double rho;
  double average = 0;
  std::int64_t epoch = 0;
};

class Stepper {
 public:
  virtual ~Stepper() = default;
  /// Steps the method takes at once (s for CA-SGD, 1 for SGD); the loop hands over at most this
  /// many.
  virtual int group_size() const = 0;
  virtual void advance(const std::vector<StepSpec>& steps) = 0;
  /// Makes, once per size, the collective calls of a group of each of `group_sizes` steps on the
  /// buffers the steps send, changing nothing a step reads before writing it, so that what the
  /// communication library does on its first calls of a size falls in the set-up, not in the
  /// training time (Open MPI 4.1, two ranks of the development VM: an 8 MB AllReduce took
  /// 25-35 ms on each of its first two calls, then 1-2.5 ms, and 8-15 ms on the first call of
  /// each other size). Nothing by default: methods whose messages are small.
  virtual void warm_up(const std::vector<int>& group_sizes) { (void)group_sizes; }
  /// This rank's weights (all of w in the row decomposition, its slice in the column one).
  virtual Vector<double> local_weights() const = 0;
  /// Saves or restores this rank's share of everything a bitwise restart needs (weights,
  /// optimizer, compressor, averaging, counters that key rounding).
  virtual void state(StateArchive& a) = 0;
  /// The gradient compressor in force, with its parameters, for the report.
  virtual nlohmann::json compression() const;  // {"method": "none"} by default
  /// The kernel paths the method took (CA-SGD: which library formed the Gram), for the report.
  virtual nlohmann::json kernels() const;  // {} by default
};

}  // namespace minisgd
