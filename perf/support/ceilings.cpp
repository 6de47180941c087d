#include "support/ceilings.hpp"

#include "minisgd/core/kokkos.hpp"

namespace minisgd::perf {

double triad_bandwidth() {
  static const double bw = [] {
    const std::int64_t n = std::int64_t(1) << 25;  // 3 × 128 MiB of floats
    Vector<float> a("a", n), b("b", n), c("c", n);
    Kokkos::deep_copy(b, 1.0f);
    Kokkos::deep_copy(c, 2.0f);
    double best = 0;
    for (int rep = 0; rep < 5; ++rep) {
      fence();
      Kokkos::Timer t;
      Kokkos::parallel_for(
          "triad", Kokkos::RangePolicy<ExecSpace>(0, n),
          KOKKOS_LAMBDA(const std::int64_t i) { a(i) = b(i) + 0.5f * c(i); });
      fence();
      const double rate = 3.0 * sizeof(float) * double(n) / t.seconds();
      best = rate > best ? rate : best;
    }
    return best;
  }();
  return bw;
}

}  // namespace minisgd::perf
