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
/// Best of `reps` triads a = b + s·c over three arrays of n floats.
Bandwidth triad(std::int64_t n, int reps) {
  // In the pages the benchmarks' data are in (fixtures.hpp: huge unless
  // MINISGD_BENCH_SMALL_PAGES), so that a stream is compared with the ceiling of its own pages.
  const auto array = [n](const char* label) {
    Vector<float> v(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), n);
    if (bench_huge_pages()) advise_huge_pages(v);
    Kokkos::deep_copy(v, 0.0f);
    return v;
  };
  const Vector<float> a = array("a"), b = array("b"), c = array("c");
  Kokkos::deep_copy(b, 1.0f);
  Kokkos::deep_copy(c, 2.0f);
  Bandwidth best{0, 0};
  const double bytes = 3.0 * sizeof(float) * double(n);
  for (int rep = 0; rep < reps; ++rep) {
    fence();
    const double cpu0 = process_cpu_seconds();
    Kokkos::Timer t;
    Kokkos::parallel_for(
        "triad", Kokkos::RangePolicy<ExecSpace>(0, n),
        KOKKOS_LAMBDA(const std::int64_t i) { a(i) = b(i) + 0.5f * c(i); });
    fence();
    const double wall = t.seconds(), cpu = process_cpu_seconds() - cpu0;
    best.wall = std::max(best.wall, bytes / wall);
    best.cpu = std::max(best.cpu, bytes / cpu * double(ExecSpace().concurrency()));
  }
  return best;
}
}  // namespace

double triad_bandwidth() {
  static const double bw = triad(std::int64_t(1) << 25, 5).wall;  // 3 × 128 MiB of floats
  return bw;
}

Bandwidth triad_now() { return triad(std::int64_t(1) << 23, 5); }

}  // namespace minisgd::perf
