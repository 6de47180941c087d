#pragma once
// How the benchmarks of streaming kernels time a call and report it against the triad.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "minisgd/core/kokkos.hpp"
#include "support/ceilings.hpp"

namespace minisgd::perf {

/// Times kernel(t) for call t = 0, 1, …; reports GB/s of `bytes` per call and the fraction of
/// the triad measured right after (of_triad in wall time, of_triad_cpu in CPU time).
template <class F>
void time_streaming(benchmark::State& state, double bytes, F&& kernel) {
  std::int64_t t = 0;
  kernel(t++);  // untimed: a GPU loads a kernel's code at its first launch (tens of ms)
  fence();
  const double cpu0 = process_cpu_seconds();
  Kokkos::Timer clock;
  for (auto _ : state) {
    kernel(t++);
    fence();
  }
  const double wall = clock.seconds(), cpu = process_cpu_seconds() - cpu0;
  const double total = bytes * double(state.iterations());
  const Bandwidth triad = triad_now();
  state.counters["GB/s"] = total / wall * 1e-9;
  state.counters["of_triad"] = total / wall / triad.wall;
  state.counters["of_triad_cpu"] = total / cpu * double(ExecSpace().concurrency()) / triad.cpu;
  state.counters["of_copy"] = total / wall / copy_bandwidth();
}

}  // namespace minisgd::perf
