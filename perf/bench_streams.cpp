// How one core reads rows from memory: the read rate of chunks of 32 rows of n floats (a chunk
// of the SGD step and of the CA-SGD margins) when the chunk is read as `runs` runs of consecutive
// rows, a row of each run at a time, 16 values of each row in turn (the order of the AVX2 tier's
// margins of long rows, kernels/host/row_loops.hpp), or as four adjacent rows at a time
// (`adjacent`). A core may keep more of the memory's bandwidth busy with several streams than with
// one: the rate is given in GB/s and as a fraction of the triad measured in this process right
// after (of_triad). Host memory only.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>

#include "minisgd/core/kokkos.hpp"
#include "support/ceilings.hpp"

namespace {

using namespace minisgd;
using HostFloats = Kokkos::View<float*, HostSpace>;

constexpr std::int64_t kChunkRows = 32;

/// Eight floats (GCC and Clang vector extensions: a 256-bit register, or two 128-bit ones).
typedef float Eight __attribute__((vector_size(32)));

/// The sum of one chunk's rows (n floats each, rows adjacent in x), `runs` rows at once: rows
/// t·runs + r (adjacent) or t + r·kChunkRows/runs (far apart) for r < runs, t in turn.
float chunk_sum(const float* x, std::int64_t n, int runs, bool adjacent) {
  Eight part[2] = {};
  const std::int64_t groups = kChunkRows / runs;
  for (std::int64_t t = 0; t < groups; ++t)
    for (std::int64_t c = 0; c + 16 <= n; c += 16)
      for (int r = 0; r < runs; ++r) {
        const float* const row = x + (adjacent ? t * runs + r : t + r * groups) * n;
        for (int h = 0; h < 2; ++h) {
          Eight v;
          std::memcpy(&v, row + c + 8 * h, sizeof v);
          part[h] += v;
        }
      }
  const Eight all = part[0] + part[1];
  float sum = 0;
  for (int l = 0; l < 8; ++l) sum += all[l];
  return sum;
}

/// Args: runs, n, adjacent (0: the runs kChunkRows / runs rows apart; 1: adjacent rows).
void BM_ReadChunks(benchmark::State& state) {
  const int runs = int(state.range(0));
  const std::int64_t n = state.range(1);
  const bool adjacent = state.range(2) != 0;
  if (!kHostMemory) {
    state.SkipWithError("host memory only");
    return;
  }
  // 256 MiB of rows, so that a sweep does not sit in cache.
  const std::int64_t chunks = (std::int64_t(1) << 26) / (kChunkRows * n);
  const auto x = perf::stream_view<HostFloats>("rows", chunks * kChunkRows * n);
  for (std::int64_t i = 0; i < std::int64_t(x.extent(0)); ++i) x(i) = 1.0f;
  std::int64_t k = 0;
  float sum = 0;
  for (auto _ : state) {
    sum += chunk_sum(x.data() + (k++ % chunks) * kChunkRows * n, n, runs, adjacent);
    benchmark::DoNotOptimize(sum);
  }
  const double bytes = double(state.iterations()) * double(kChunkRows * n * sizeof(float));
  const perf::Bandwidth triad = perf::triad_now();
  state.counters["GB/s"] = benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsRate);
  state.counters["of_triad"] = benchmark::Counter(bytes / triad.wall, benchmark::Counter::kIsRate);
}

BENCHMARK(BM_ReadChunks)
    ->ArgNames({"runs", "n", "adjacent"})
    ->ArgsProduct({{1, 4}, {128, 512, 2000}, {0}})
    ->Args({4, 128, 1})
    ->Args({4, 512, 1})
    ->Args({4, 2000, 1})
    ->UseRealTime();

}  // namespace
