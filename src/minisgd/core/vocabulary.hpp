#pragma once
// The choices every layer speaks of (models, kernels, data, solvers, the deck), with their
// names. Free of Kokkos and of the configuration, so a kernel header can name a loss
// without pulling in the deck.
#include "minisgd/core/names.hpp"

namespace minisgd {

enum class Loss { logistic, linear, poisson };
constexpr NameTable<Loss, 3> names(Loss) {
  return {{{Loss::logistic, "logistic"}, {Loss::linear, "linear"}, {Loss::poisson, "poisson"}}};
}

/// Row: each rank holds whole samples (data parallel). Column: each rank holds a slice of
/// the features of every sample (feature parallel, CA-SGD's layout).
enum class Decomposition { row, column };
constexpr NameTable<Decomposition, 2> names(Decomposition) {
  return {{{Decomposition::row, "row"}, {Decomposition::column, "column"}}};
}

enum class Method { sgd, ca_sgd };
constexpr NameTable<Method, 2> names(Method) {
  return {{{Method::sgd, "sgd"}, {Method::ca_sgd, "ca-sgd"}}};
}

/// optimal: 1/(λ(t + t0)), Pegasos' and scikit-learn's schedule for strongly convex F;
/// linear: η₀·(1 − t/T) over the run's T planned steps.
enum class Schedule { constant, inverse_time, step, optimal, linear };
constexpr NameTable<Schedule, 5> names(Schedule) {
  return {{{Schedule::constant, "constant"},
           {Schedule::inverse_time, "inverse_time"},
           {Schedule::step, "step"},
           {Schedule::optimal, "optimal"},
           {Schedule::linear, "linear"}}};
}

/// Which iterates the reported weights average: none (the last), polyak (every one from the
/// start of averaging), tail (the last half of the run unless a start is given).
enum class Averaging { none, polyak, tail };
constexpr NameTable<Averaging, 3> names(Averaging) {
  return {{{Averaging::none, "none"}, {Averaging::polyak, "polyak"}, {Averaging::tail, "tail"}}};
}

enum class OptimizerKind { sgd, momentum, adam };
constexpr NameTable<OptimizerKind, 3> names(OptimizerKind) {
  return {{{OptimizerKind::sgd, "sgd"},
           {OptimizerKind::momentum, "momentum"},
           {OptimizerKind::adam, "adam"}}};
}

/// Who forms CA-SGD's Gram (docs/gpu.md): cuBLAS wherever it computes what was asked
/// (automatic), never (portable), or always, an input error where it cannot (cublas).
enum class GramEngine { automatic, portable, cublas };
constexpr NameTable<GramEngine, 3> names(GramEngine) {
  return {{{GramEngine::automatic, "auto"},
           {GramEngine::portable, "portable"},
           {GramEngine::cublas, "cublas"}}};
}

}  // namespace minisgd
