#pragma once
// Machine ceilings measured in the benchmark's own process, so every rate can be reported
// as a fraction of what this machine actually sustains.
#include <string>

#include "minisgd/core/huge_pages.hpp"
#include "minisgd/core/kokkos.hpp"

namespace minisgd::perf {

/// Whether the benchmarks' streamed data and the triad live in huge pages, as the training
/// share does (core/huge_pages.hpp): yes unless MINISGD_BENCH_SMALL_PAGES is set, to measure
/// what the huge pages bring.
bool bench_huge_pages();

/// An uninitialized view a benchmark or a ceiling streams, in the pages of bench_huge_pages(),
/// so that every stream is compared with the ceiling of its own pages.
template <class View, class... Extents>
View stream_view(const char* label, Extents... extents) {
  if (bench_huge_pages()) return in_huge_pages<View>(label, extents...);
  return View(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), extents...);
}

/// Sustained memory bandwidth (bytes/s) of a Kokkos triad a = b + s·c over arrays much larger
/// than the caches (3 × 128 MiB; 3 × 256 MiB on a GPU), best of several repetitions. Measured once,
/// on first use.
double triad_bandwidth();

/// Bandwidth (bytes/s, read + written) of a copy between two arrays much larger than the
/// caches (Kokkos::deep_copy: cudaMemcpy device to device on a GPU), best of several
/// repetitions. Measured once, on first use.
double copy_bandwidth();

/// A triad measured now (3 × 32 MiB on a CPU, still well beyond the last-level cache; 3 × 256 MiB
/// on a GPU), best of five, in bytes per second of wall time and per second of this process's CPU
/// time. On a machine shared with other jobs the CPU-time rate is the robust one: a kernel timed
/// the same way right before it is compared with the bandwidth it could have had while it ran.
struct Bandwidth {
  double wall;
  double cpu;
};
Bandwidth triad_now();

/// Seconds of CPU time this process has used (all its threads).
double process_cpu_seconds();

}  // namespace minisgd::perf
