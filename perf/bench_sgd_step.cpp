// One local SGD step (margins, loss derivatives, gradient product, update) on a batch of
// b rows × d columns, per loss and per storage type S of X (arithmetic in A). The step reads
// the batch from memory once (the fused pass rereads each row from L1; with several threads
// the second pass comes from cache), so it is memory bound: the roofline is
//   samples/s = triad bytes/s ÷ bytes per row,  bytes per row = d·sizeof(S) + 8 (the label),
// and the counters give samples/s, GB/s and both as fractions of the triad measured in this
// process right after each benchmark (of_roofline = samples/s ÷ roofline samples/s;
// of_roofline_cpu the same in samples and bytes per second of CPU time, the robust figure
// on a machine shared with other jobs; of_copy the bytes per second over a large copy's, the
// ceiling quoted for GPUs; in_cache_of_roofline the samples/s of the same step on one batch
// that stays in cache, over the roofline's: below 1 the arithmetic, not the memory, bounds it).
#include <benchmark/benchmark.h>

#include <cstdint>

#include "minisgd/kernels/glm_kernels.hpp"
#include "minisgd/kernels/sgd_kernels.hpp"
#include "support/ceilings.hpp"
#include "support/fixtures.hpp"

namespace {

using namespace minisgd;

template <Loss L, class S, class A>
void BM_SgdStep(benchmark::State& state) {
  const std::int64_t b = state.range(0), d = state.range(1);
  // At least 256 MiB of X in fp32 rows, so an epoch's sweep does not sit in cache.
  const std::int64_t batches = kmax<std::int64_t>(4, (std::int64_t(1) << 28) / (b * d * 4));
  const Matrix<S> X = perf::stream_matrix<S>("X", batches * b, d);  // every value set below
  Vector<double> y("y", batches * b);
  Kokkos::parallel_for(
      "bench::fill", Kokkos::RangePolicy<ExecSpace>(0, batches * b),
      KOKKOS_LAMBDA(const std::int64_t i) {
        // Labels in a pseudo-random order (splitmix64's mix of the row), as in real data: a
        // regular pattern would let the branch predictor learn the signs of the margins.
        std::uint64_t h = std::uint64_t(i) + 0x9E3779B97F4A7C15ull;
        h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
        h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
        const bool negative = ((h ^ (h >> 31)) & 1) != 0;
        y(i) = negative ? (L == Loss::logistic ? -1.0 : 0.0) : 1.0;
        for (std::int64_t c = 0; c < d; ++c)
          X(i, c) = precision::convert<S>(double((i * 7 + c * 13) % 17) / (17.0 * double(d)));
      });
  Vector<A> w("w", d), z("z", b), u("u", b), g("g", d);
  sgd_gradient<L>(X, 0, y, w, z, false, u, g);  // untimed: a GPU loads a kernel's code at its
  sgd_update(w, g, A(1), A(1e-3));              // first launch (tens of ms)
  fence();
  std::int64_t t = 0;
  const double cpu0 = perf::process_cpu_seconds();
  Kokkos::Timer clock;
  for (auto _ : state) {
    const std::int64_t first = (t++ % batches) * b;
    sgd_gradient<L>(X, first, y, w, z, false, u, g);
    sgd_update(w, g, A(1), A(1e-3));
    fence();
  }
  const double wall = clock.seconds(), cpu = perf::process_cpu_seconds() - cpu0;
  // The same step on the first batch over and over, its rows in cache: the arithmetic's own
  // ceiling. Where it is below the memory roofline the step cannot reach the roofline however
  // well it streams (short rows on a CPU).
  const std::int64_t cached = kmax<std::int64_t>(16, std::int64_t(state.iterations()) / 4);
  Kokkos::Timer cached_clock;
  for (std::int64_t i = 0; i < cached; ++i) {
    sgd_gradient<L>(X, 0, y, w, z, false, u, g);
    sgd_update(w, g, A(1), A(1e-3));
  }
  fence();
  const double cached_samples_per_s = double(cached * b) / cached_clock.seconds();
  const double row_bytes = double(d * sizeof(S) + sizeof(double));
  const double samples = double(state.iterations()) * double(b);
  const perf::Bandwidth triad = perf::triad_now();  // right after: the same machine load
  const double threads = double(ExecSpace().concurrency());
  state.counters["samples/s"] = samples / wall;
  state.counters["GB/s"] = samples / wall * row_bytes * 1e-9;
  state.counters["of_roofline"] = samples / wall / (triad.wall / row_bytes);
  state.counters["of_roofline_cpu"] = samples / cpu * threads / (triad.cpu / row_bytes);
  state.counters["of_copy"] = samples / wall * row_bytes / perf::copy_bandwidth();
  state.counters["in_cache_of_roofline"] = cached_samples_per_s / (triad.wall / row_bytes);
}

// Shapes of the paper problems' local batches: HIGGS (28), SUSY (18), the synthetic decks (256),
// epsilon (2000) columns.
void shapes(benchmark::internal::Benchmark* bm) {
  for (std::int64_t d : {18, 28, 256, 2000})
    for (std::int64_t b : {32, 256}) bm->Args({b, d});
#ifdef KOKKOS_ENABLE_CUDA
  bm->Args({4096, 2000});  // a batch that fills a GPU: 32 MB of fp32 rows
#endif
}

using precision::bf16;
using precision::fp16;
BENCHMARK_TEMPLATE(BM_SgdStep, Loss::logistic, float, float)->Apply(shapes)->UseRealTime();
BENCHMARK_TEMPLATE(BM_SgdStep, Loss::logistic, bf16, float)->Apply(shapes)->UseRealTime();
BENCHMARK_TEMPLATE(BM_SgdStep, Loss::logistic, fp16, float)->Apply(shapes)->UseRealTime();
BENCHMARK_TEMPLATE(BM_SgdStep, Loss::logistic, double, double)->Apply(shapes)->UseRealTime();
BENCHMARK_TEMPLATE(BM_SgdStep, Loss::linear, float, float)->Apply(shapes)->UseRealTime();
BENCHMARK_TEMPLATE(BM_SgdStep, Loss::poisson, float, float)->Apply(shapes)->UseRealTime();

}  // namespace
