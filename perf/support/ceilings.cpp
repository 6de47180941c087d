#include "support/ceilings.hpp"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <string>

#include "minisgd/core/huge_pages.hpp"
#include "minisgd/core/kokkos.hpp"

namespace minisgd::perf {

bool bench_huge_pages() { return std::getenv("MINISGD_BENCH_SMALL_PAGES") == nullptr; }

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

namespace {

// Arrays well beyond the last-level cache: a CPU's tens of MiB, a GPU's L2 (up to 60 MB on an
// H200) with many times over to spare on the GPU, where a triad of 3 × 32 MiB partly hits L2.
#ifdef KOKKOS_ENABLE_CUDA
constexpr std::int64_t kOnceFloats = std::int64_t(1) << 26, kNowFloats = std::int64_t(1) << 26;
#else
constexpr std::int64_t kOnceFloats = std::int64_t(1) << 25, kNowFloats = std::int64_t(1) << 23;
#endif

/// An array of n floats set to `value`, in the benchmarks' pages (stream_view).
Vector<float> stream_array(const char* label, std::int64_t n, float value) {
  const auto v = stream_view<Vector<float>>(label, n);
  Kokkos::deep_copy(v, value);
  return v;
}

/// Best of `reps` calls of kernel() moving `bytes`, in bytes per second of wall time and of
/// this process's CPU time (× the threads).
template <class Kernel>
Bandwidth best_rate(double bytes, int reps, Kernel&& kernel) {
  Bandwidth best{0, 0};
  for (int rep = 0; rep < reps; ++rep) {
    fence();
    const double cpu0 = process_cpu_seconds();
    Kokkos::Timer t;
    kernel();
    fence();
    const double wall = t.seconds(), cpu = process_cpu_seconds() - cpu0;
    best.wall = std::max(best.wall, bytes / wall);
    best.cpu = std::max(best.cpu, bytes / cpu * double(ExecSpace().concurrency()));
  }
  return best;
}

/// Best of `reps` triads a = b + s·c over three arrays of n floats.
Bandwidth triad(std::int64_t n, int reps) {
  const Vector<float> a = stream_array("a", n, 0.0f), b = stream_array("b", n, 1.0f),
                      c = stream_array("c", n, 2.0f);
  return best_rate(3.0 * sizeof(float) * double(n), reps, [&] {
    Kokkos::parallel_for(
        "triad", Kokkos::RangePolicy<ExecSpace>(0, n),
        KOKKOS_LAMBDA(const std::int64_t i) { a(i) = b(i) + 0.5f * c(i); });
  });
}

}  // namespace

double triad_bandwidth() {
  static const double bw = triad(kOnceFloats, 5).wall;
  return bw;
}

Bandwidth triad_now() { return triad(kNowFloats, 5); }

double copy_bandwidth() {
  static const double bw = [] {
    const Vector<float> a = stream_array("a", kOnceFloats, 0.0f),
                        b = stream_array("b", kOnceFloats, 1.0f);
    // Twenty: a GPU's clocks may still be rising from idle when this is first called (an H200
    // gave 0.78 TB/s in one process, 3.6 TB/s in another, with five).
    return best_rate(2.0 * sizeof(float) * double(kOnceFloats), 20,
                     [&] { Kokkos::deep_copy(a, b); })
        .wall;
  }();
  return bw;
}

}  // namespace minisgd::perf
