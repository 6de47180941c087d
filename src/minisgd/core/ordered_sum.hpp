#pragma once
// Sums whose result does not depend on the thread count: a parallel_reduce combines partial
// sums in an order set by the backend and its threads, so its last bits vary between
// KOKKOS_NUM_THREADS=1, 2 and 4. Here the order is fixed by n alone.
#include <cstdint>
#include <string>
#include <vector>

#include "minisgd/core/kokkos.hpp"

namespace minisgd {

/// Σ term(i), i < n: blocks of 1024 terms summed left to right in parallel, then the block
/// sums left to right on the host. On a host backend a work item sums eight blocks side by
/// side, each still left to right: one chain of additions waits on the adder's latency, eight
/// fill its pipeline (the same bits).
template <class F>
double ordered_sum(const char* label, std::int64_t n, const F& term) {
  constexpr std::int64_t block = 1024;
  const std::int64_t blocks = (n + block - 1) / block;
  if constexpr (kHostMemory) {
    constexpr std::int64_t kSide = 8;
    std::vector<double> partial(std::size_t(blocks), 0.0);
    double* const out = partial.data();
    Kokkos::parallel_for(
        label,
        Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, (blocks + kSide - 1) / kSide),
        [=](const std::int64_t group) {
          const std::int64_t b0 = group * kSide, full = kmin(kSide, (n - b0 * block) / block);
          double s[kSide] = {};
          if (full == kSide)  // the full blocks side by side (a constant count: in registers)
            for (std::int64_t i = 0; i < block; ++i)
              for (std::int64_t j = 0; j < kSide; ++j) s[j] += term((b0 + j) * block + i);
          else
            for (std::int64_t i = 0; i < block; ++i)
              for (std::int64_t j = 0; j < full; ++j) s[j] += term((b0 + j) * block + i);
          for (std::int64_t j = full; j < kSide && b0 + j < blocks; ++j)  // the last, short one
            for (std::int64_t i = (b0 + j) * block; i < n; ++i) s[j] += term(i);
          for (std::int64_t j = 0; j < kSide && b0 + j < blocks; ++j) out[b0 + j] = s[j];
        });
    double total = 0;
    for (std::int64_t b = 0; b < blocks; ++b) total += partial[std::size_t(b)];
    return total;
  } else {
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
}

}  // namespace minisgd
