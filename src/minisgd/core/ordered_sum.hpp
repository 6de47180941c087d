#pragma once
// Sums whose result does not depend on the thread count: a parallel_reduce combines partial
// sums in an order set by the backend and its threads, so its last bits vary between
// KOKKOS_NUM_THREADS=1, 2 and 4. Here the order is fixed by n alone.
#include <cstdint>
#include <string>

#include "minisgd/core/kokkos.hpp"

namespace minisgd {

/// Σ term(i), i < n: blocks of 1024 terms summed left to right in parallel, then the block
/// sums left to right on the host.
template <class F>
double ordered_sum(const char* label, std::int64_t n, const F& term) {
  constexpr std::int64_t block = 1024;
  const std::int64_t blocks = (n + block - 1) / block;
  Kokkos::View<double*, MemSpace> partial(std::string(label), blocks);
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<ExecSpace>(0, blocks), KOKKOS_LAMBDA(const std::int64_t b) {
        const std::int64_t end = kmin(n, (b + 1) * block);
        double s = 0;
        for (std::int64_t i = b * block; i < end; ++i) s += term(i);
        partial(b) = s;
      });
  const auto host = Kokkos::create_mirror_view_and_copy(HostSpace(), partial);
  double total = 0;
  for (std::int64_t b = 0; b < blocks; ++b) total += host(b);
  return total;
}

}  // namespace minisgd
