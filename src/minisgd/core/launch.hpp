#pragma once
// Short host work without a kernel launch. A Serial launch costs 20–30 ns (its label a heap
// string when longer than 15 characters, plus the tools' checks), one on an OpenMP team about
// 0.5 µs, and a step on short rows runs several kernels in well under a microsecond each.
#include <cstdint>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/profiling.hpp"

namespace minisgd {

/// f(i) for every i in [0, count): a parallel_for named `name`, except host work that moves
/// fewer than `bytes` ≤ kCallingThreadBytes (on_calling_thread), which the calling thread runs
/// in order inside a Kokkos Tools region of that name.
template <class F>
void for_each_index(const char* name, std::int64_t count, std::int64_t bytes, const F& f) {
  if constexpr (kHostMemory) {
    if (on_calling_thread(bytes)) {
      Region region(name);
      for (std::int64_t i = 0; i < count; ++i) f(i);
      return;
    }
  }
  Kokkos::parallel_for(name, Kokkos::RangePolicy<ExecSpace>(0, count), f);
}

}  // namespace minisgd
