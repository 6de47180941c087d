// One SGD step on a sparse share at P = 1 (the lazily scaled step of solvers/sgd.cpp: margins
// x·v, then the derivatives with the update of the batch's columns), on rows shaped like
// rcv1 and url (features, mean nonzeros and their Zipf law from data/sparse_synthetic.hpp),
// stored as S. Its roofline streams the batch's values and indices once and gathers a weight
// for each of them, besides the labels and row offsets:
//   bytes per row = nnz_row·(sizeof(S) + 4 + sizeof(A)) + 16,
// and of_triad is samples/s over (triad bytes/s ÷ bytes per row), the triad measured in this
// process right after the benchmark (of_triad_cpu: the same in CPU seconds). in_cache_ns/nnz:
// the step's time per nonzero on one batch that stays in cache. Shapes: 0/b rcv1-like, 1/b
// url-like.
//
// The triad roofline books a gathered weight as sizeof(A) streamed bytes, but each weight is a
// random access: a line from L2 on rcv1-like rows, from L3 or memory on url-like ones. So the
// step is also set against its own accesses alone, in this process, on the same index stream:
// access_ns/nnz is a pass that reads w(j) for every index j (the margins' reads) plus a pass
// that adds to w(j) (the update's read-modify-write), with no values, no arithmetic to speak of
// and no dependence between rows; access_of_triad is the fraction of the roofline those passes
// alone would reach, the step's of_triad scaled by its time over theirs. (A reference, not a
// ceiling: the step's prefetches can overlap misses that the plain passes wait for.)
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "minisgd/core/huge_pages.hpp"
#include "minisgd/data/sparse_synthetic.hpp"
#include "minisgd/kernels/sparse_kernels.hpp"
#include "support/ceilings.hpp"
#include "support/fixtures.hpp"

namespace {

using namespace minisgd;

/// An rcv1-shaped (0) or url-shaped (1) share with at least 256 MiB of values and indices.
template <class S>
SparseRows<S> share(int kind, std::int64_t& rows_out, std::int64_t& features) {
  SyntheticConfig c;
  c.kind = kind == 0 ? SyntheticKind::rcv1_like : SyntheticKind::url_like;
  SparseShape shape = sparse_shape(c);
  shape.rows = (std::int64_t(1) << 28) / std::int64_t(shape.nnz_per_row * (sizeof(S) + 4));
  const SparseRowGenerator gen(1, shape, Loss::logistic, 0.0);
  std::vector<std::int64_t> cols, row_map{0};
  std::vector<std::int32_t> entries;
  std::vector<float> values;
  for (std::int64_t r = 0; r < shape.rows; ++r) {
    gen.columns(r, cols);
    for (const std::int64_t j : cols) {
      entries.push_back(std::int32_t(j));
      values.push_back(gen.value(gen.key(r), j));
    }
    row_map.push_back(std::int64_t(entries.size()));
  }
  SparseRows<S> X;
  X.row_map = Kokkos::View<std::int64_t*, MemSpace>("row_map", row_map.size());
  X.entries = Kokkos::View<std::int32_t*, MemSpace>("entries", entries.size());
  X.values = Vector<S>("values", values.size());
  const auto rm = Kokkos::create_mirror_view(X.row_map);
  const auto en = Kokkos::create_mirror_view(X.entries);
  const auto va = Kokkos::create_mirror_view(X.values);
  for (std::size_t i = 0; i < row_map.size(); ++i) rm(i) = row_map[i];
  for (std::size_t i = 0; i < entries.size(); ++i) {
    en(i) = entries[i];
    va(i) = precision::convert<S>(values[i]);
  }
  Kokkos::deep_copy(X.row_map, rm);
  Kokkos::deep_copy(X.entries, en);
  Kokkos::deep_copy(X.values, va);
  rows_out = shape.rows;
  features = shape.features;
  return X;
}

/// Seconds per nonzero of the step's weight accesses alone over X's whole index stream: one
/// pass of reads w(j) (four independent sums) and one of increments w(j) += c, best of three.
template <class S, class A>
double access_seconds_per_nnz(const SparseRows<S>& X, const Vector<A>& v) {
  const std::int32_t* const col = X.entries.data();
  A* const w = v.data();
  const std::int64_t nnz = std::int64_t(X.entries.extent(0)) / 4 * 4;
  double best_read = 1e30, best_update = 1e30;
  A sink = A(0);
  for (int rep = 0; rep < 3; ++rep) {
    Kokkos::Timer read_clock;
    A s0 = A(0), s1 = A(0), s2 = A(0), s3 = A(0);
    for (std::int64_t k = 0; k < nnz; k += 4) {
      s0 += w[col[k]];
      s1 += w[col[k + 1]];
      s2 += w[col[k + 2]];
      s3 += w[col[k + 3]];
    }
    best_read = kmin(best_read, read_clock.seconds());
    sink += (s0 + s1) + (s2 + s3);
    Kokkos::Timer update_clock;
    for (std::int64_t k = 0; k < nnz; ++k) w[col[k]] += A(1e-30);
    best_update = kmin(best_update, update_clock.seconds());
  }
  benchmark::DoNotOptimize(sink);
  return (best_read + best_update) / double(nnz);
}

template <class S, class A>
void BM_SparseStep(benchmark::State& state) {
  if constexpr (!kHostMemory) {
    state.SkipWithError("the lazily scaled step runs on host backends");
  } else {
    const std::int64_t b = state.range(1);
    std::int64_t m = 0, d = 0;
    const SparseRows<S> X = share<S>(int(state.range(0)), m, d);
    Vector<double> y("y", m);
    Kokkos::parallel_for(
        "bench::labels", Kokkos::RangePolicy<ExecSpace>(0, m),
        KOKKOS_LAMBDA(const std::int64_t i) { y(i) = ((i * 2654435761u) >> 7) & 1 ? 1.0 : -1.0; });
    const Vector<A> v = zeroed_in_huge_pages<Vector<A>>("v", d);  // as SgdStepper's
    Vector<A> z("z", b), u("u", b);
    const std::int64_t batches = m / b;
    A scale = A(1);
    const auto step = [&](std::int64_t first) {
      csr_margins_prefetched(X, first, v, scale, z);
      scale *= A(1 - 1e-7);
      csr_direct_update<Loss::logistic>(X, first, y, z, u, v, A(1e-2) / scale);
    };
    step(0);
    std::int64_t t = 0, nnz = 0;
    const double cpu0 = perf::process_cpu_seconds();
    Kokkos::Timer clock;
    for (auto _ : state) {
      const std::int64_t first = (t++ % batches) * b;
      step(first);
      nnz += X.row_map(first + b) - X.row_map(first);
    }
    const double wall = clock.seconds(), cpu = perf::process_cpu_seconds() - cpu0;
    // The same step on the first batch over and over, its rows and weights in cache: the
    // arithmetic's and the gathers' own ceiling, whatever the memory streams.
    const std::int64_t cached = kmax<std::int64_t>(16, std::int64_t(state.iterations()) / 4);
    Kokkos::Timer cached_clock;
    for (std::int64_t i = 0; i < cached; ++i) step(0);
    const double cached_nnz_per_s =
        double(cached) * double(X.row_map(b) - X.row_map(0)) / cached_clock.seconds();
    const double samples = double(state.iterations()) * double(b);
    const double bytes = double(nnz) * double(sizeof(S) + 4 + sizeof(A)) + 16.0 * samples;
    const double access_ns = access_seconds_per_nnz(X, v) * 1e9;
    const perf::Bandwidth triad = perf::triad_now();
    state.counters["samples/s"] = samples / wall;
    state.counters["GB/s"] = bytes / wall * 1e-9;
    state.counters["of_triad"] = bytes / wall / triad.wall;
    state.counters["of_triad_cpu"] = bytes / cpu / triad.cpu;
    state.counters["nnz/row"] = double(nnz) / samples;
    state.counters["ns/nnz"] = wall / double(nnz) * 1e9;
    state.counters["in_cache_ns/nnz"] = 1e9 / cached_nnz_per_s;
    state.counters["access_ns/nnz"] = access_ns;
    state.counters["access_of_triad"] = bytes / triad.wall / (access_ns * 1e-9 * double(nnz));
    state.SetLabel(state.range(0) == 0 ? "rcv1-like" : "url-like");
  }
}

void shapes(benchmark::internal::Benchmark* bm) {
  for (std::int64_t kind : {0, 1})
    for (std::int64_t b : {32, 256}) bm->Args({kind, b});
}

BENCHMARK_TEMPLATE(BM_SparseStep, float, float)->Apply(shapes)->UseRealTime();
BENCHMARK_TEMPLATE(BM_SparseStep, double, double)->Apply(shapes)->UseRealTime();
BENCHMARK_TEMPLATE(BM_SparseStep, precision::bf16, float)->Apply(shapes)->UseRealTime();

}  // namespace
