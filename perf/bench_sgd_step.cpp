// One local SGD step (margins, loss derivatives, gradient product, update) on a batch of
// b rows × d columns. The step streams the batch twice, so it is memory bound: report GB/s
// and the fraction of the triad bandwidth measured in this process.
#include <benchmark/benchmark.h>

#include "minisgd/kernels/glm_kernels.hpp"
#include "support/ceilings.hpp"

namespace {

using namespace minisgd;

template <class T>
void BM_SgdStep(benchmark::State& state) {
  const std::int64_t b = state.range(0), d = state.range(1);
  // Enough batches that the sweep does not sit in cache, like a real epoch.
  const std::int64_t batches = kmax<std::int64_t>(1, (std::int64_t(1) << 26) / (b * d * sizeof(T)));
  Matrix<T> X("X", batches * b, d);
  Vector<double> y("y", batches * b);
  Kokkos::deep_copy(X, T(0.01));
  Kokkos::deep_copy(y, 1.0);
  Vector<T> w("w", d), z("z", b), u("u", b), g("g", d);
  std::int64_t t = 0;
  Kokkos::Timer clock;
  for (auto _ : state) {
    const std::int64_t first = (t++ % batches) * b;
    const Matrix<T> Xb = row_block(X, first, b);
    batch_margins(Xb, w, z);
    loss_derivatives(Loss::logistic, z, range(y, first, b), u);
    batch_gradient(Xb, u, g);
    sgd_update(w, g, T(1), T(1e-3));
    fence();
  }
  const double bytes = 2.0 * double(b * d * sizeof(T)) + 4.0 * d * sizeof(T);
  state.counters["GB/s"] = benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GF/s"] = benchmark::Counter(4.0 * b * d * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["samples/s"] = benchmark::Counter(double(b), benchmark::Counter::kIsIterationInvariantRate);
  const double achieved = bytes * double(state.iterations()) / clock.seconds();
  state.counters["of_triad"] = achieved / perf::triad_bandwidth();
}

// Shapes of the paper problems' local batches: HIGGS (28), SUSY (18), epsilon (2000) columns.
void shapes(benchmark::internal::Benchmark* bm) {
  for (std::int64_t d : {18, 28, 2000})
    for (std::int64_t b : {32, 256}) bm->Args({b, d});
}

BENCHMARK_TEMPLATE(BM_SgdStep, float)->Apply(shapes)->UseRealTime();
BENCHMARK_TEMPLATE(BM_SgdStep, double)->Apply(shapes)->UseRealTime();

}  // namespace
