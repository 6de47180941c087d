// The streaming kernels of one CA-SGD outer step beside its Gram (bench_gram): the partial
// margins r = Y w, the weight update w ← c·w − Yᵀv, and the gather/cast of the s batches
// into the Gram's input type. Each reads the s·b rows of Y once (the gather also writes
// them), so each is reported in GB/s and as a fraction of the triad measured in this
// process right after it. Shapes: s = 16, b = 32, the paper decks' columns.
#include <benchmark/benchmark.h>

#include "minisgd/kernels/ca_sgd_kernels.hpp"
#include "minisgd/precision/plan.hpp"
#include "support/fixtures.hpp"
#include "support/stream_timing.hpp"

namespace {

using namespace minisgd;
using precision::bf16;

/// X with enough rows that the s batches of each call come from memory, not cache, and the
/// first row of each batch for every call (call t reads batches t·s … t·s + s − 1).
template <class S>
struct Batches {
  Matrix<S> X;
  Kokkos::View<std::int64_t**, Kokkos::LayoutRight, MemSpace> first;
  Batches(std::int64_t s, std::int64_t b, std::int64_t n)
      : X(perf::stream_matrix<S>(
            "X",
            kmax<std::int64_t>(4 * s * b, (std::int64_t(1) << 27) / (n * std::int64_t(sizeof(S)))),
            n)),
        first("first", std::int64_t(X.extent(0)) / (s * b), s) {
    Kokkos::deep_copy(X, precision::convert<S>(0.01));
    auto h = Kokkos::create_mirror_view(first);
    for (std::int64_t t = 0; t < std::int64_t(h.extent(0)); ++t)
      for (std::int64_t j = 0; j < s; ++j) h(t, j) = (t * s + j) * b;
    Kokkos::deep_copy(first, h);
  }
  BatchRows call(std::int64_t t) const {
    return Kokkos::subview(first, t % std::int64_t(first.extent(0)), Kokkos::ALL());
  }
};

template <class S, class A>
void BM_PartialMargins(benchmark::State& state) {
  const std::int64_t s = state.range(0), b = state.range(1), n = state.range(2);
  const Batches<S> data(s, b, n);
  const Vector<A> w("w", n), r("r", s * b);
  perf::time_streaming(state, double(s * b) * double(n * sizeof(S)), [&](std::int64_t t) {
    partial_margins(data.X, data.call(t), b, w, precision::Rounder{}, r);
  });
}

template <class S, class A>
void BM_UpdateWeights(benchmark::State& state) {
  const std::int64_t s = state.range(0), b = state.range(1), n = state.range(2);
  const Batches<S> data(s, b, n);
  const Vector<A> w("w", n), g("g", n), v("v", s * b);
  perf::time_streaming(state, double(s * b) * double(n * sizeof(S)), [&](std::int64_t t) {
    update_weights(data.X, data.call(t), b, int(s), v, 1.0, precision::Rounder{},
                   precision::Rounder{}, std::uint64_t(t), 0, g, w);
  });
}

/// Reads the batches as S and writes them as In: both count. The rounding is the one the
/// `mixed` preset's CA-SGD passes (its gram_input knob, relative to fp64, as ca_sgd.cpp builds
/// it): round to nearest bf16, the typed cast. A default Rounder (fp64, identity) would time
/// the element-by-element run-time rounding path that no run takes into bf16.
template <class S, class In>
void BM_GatherBatches(benchmark::State& state) {
  const std::int64_t s = state.range(0), b = state.range(1), n = state.range(2);
  const Batches<S> data(s, b, n);
  const Matrix<In> Y("Y", s * b, n);
  const precision::Rounder round =
      precision::rounder(precision::preset_plan(precision::Preset::mixed),
                         precision::Knob::gram_input, precision::Format::fp64, 42);
  perf::time_streaming(
      state, double(s * b) * double(n) * double(sizeof(S) + sizeof(In)),
      [&](std::int64_t t) { gather_batches(data.X, data.call(t), b, round, std::uint64_t(t), Y); });
}

void shapes(benchmark::internal::Benchmark* bm) {
  for (std::int64_t n : {2000, 500, 28}) bm->Args({16, 32, n});
  bm->ArgNames({"s", "b", "n"})->UseRealTime();
}

BENCHMARK_TEMPLATE(BM_PartialMargins, float, float)->Apply(shapes);
BENCHMARK_TEMPLATE(BM_PartialMargins, bf16, float)->Apply(shapes);
BENCHMARK_TEMPLATE(BM_UpdateWeights, float, float)->Apply(shapes);
BENCHMARK_TEMPLATE(BM_UpdateWeights, bf16, float)->Apply(shapes);
BENCHMARK_TEMPLATE(BM_GatherBatches, float, bf16)->Apply(shapes);
BENCHMARK_TEMPLATE(BM_GatherBatches, bf16, bf16)->Apply(shapes);

}  // namespace
