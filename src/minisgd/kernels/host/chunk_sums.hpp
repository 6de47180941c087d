#pragma once
// The order in which the host kernels add the chunks' shares of a gradient, for any number of
// threads: the same additions in the same order, so the same bits.
#include <cstdint>
#include <type_traits>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/launch.hpp"
#include "minisgd/core/profiling.hpp"
#include "minisgd/kernels/host/scratch.hpp"

namespace minisgd::host {

/// g[0..n) = the shares of `chunks` chunks added in chunk order, made kGroup consecutive chunks
/// at a time by share(k, count, p, pitch, into_g) for chunks k .. k + count − 1 (count ≤ kGroup):
/// added one after the other into p = g when into_g (std::true_type), else each stored from
/// zero, chunk k + j's at p + j·pitch (std::false_type), so each caller compiles both variants
/// without a run-time test. Fewer than two chunks, or work under kCallingThreadBytes: the calling
/// thread walks the groups in order (no launch: even a team of one thread costs ≈ 0.5 µs to
/// start with OpenMP). Otherwise one launch in which threads take groups in any order, each
/// chunk's share going to its own row of the calling thread's partials, which that thread then
/// adds to g in chunk order: the same additions in the same order, so the same bits for any
/// thread count and any kGroup. `name` names the launch or region.
template <int kGroup, class A, class Share>
void sum_of_chunk_groups(const char* name, std::int64_t chunks, std::int64_t bytes, int n, A* g,
                         const Share& share) {
  const auto count = [chunks](std::int64_t k) {
    return int(kmin<std::int64_t>(kGroup, chunks - k));
  };
  const std::int64_t pitch = partials_pitch<A>(n);
  if (chunks < 2 || on_calling_thread(bytes)) {
    for (int c = 0; c < n; ++c) g[c] = A(0);
    Region region(name);  // (its name copied only when a tool listens)
    for (std::int64_t k = 0; k < chunks; k += kGroup)
      share(k, count(k), g, pitch, std::true_type{});
    return;
  }
  A* const partials = partials_scratch<A>(chunks * pitch);
  Kokkos::parallel_for(
      name, Kokkos::RangePolicy<ExecSpace>(0, (chunks + kGroup - 1) / kGroup),
      KOKKOS_LAMBDA(const std::int64_t i) {
        share(i * kGroup, count(i * kGroup), partials + i * kGroup * pitch, pitch,
              std::false_type{});
      });
  sync_for_host(name);
  for (int c = 0; c < n; ++c) g[c] = A(0);
  for (std::int64_t k = 0; k < chunks; ++k)
    for (int c = 0; c < n; ++c) g[c] += partials[k * pitch + c];
}

}  // namespace minisgd::host
