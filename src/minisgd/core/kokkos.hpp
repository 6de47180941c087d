#pragma once
// The one place that knows Kokkos 3.4 and 4.x differ: everything else includes this.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

namespace minisgd {

using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;
using HostSpace = Kokkos::HostSpace;

template <class T>
using Vector = Kokkos::View<T*, MemSpace>;
/// Row-major, so a batch of consecutive rows is one contiguous block (no gather).
template <class T>
using Matrix = Kokkos::View<T**, Kokkos::LayoutRight, MemSpace>;

/// Every fence minisgd issues, named by why it is there. Kokkos 3.4 neither takes a fence
/// label (that needs 3.5+) nor tells tools about fences, so with a Kokkos Tools library
/// loaded this marks the event "minisgd::fence <why>" first (docs/output.md, "Profiling").
inline void fence(const char* why = "") {
  if (Kokkos::Tools::profileLibraryLoaded())
    Kokkos::Tools::markEvent(std::string("minisgd::fence ") + why);
  Kokkos::fence();
}

/// Whether a kernel may still run after its launch returned: device backends (and HPX with
/// asynchronous dispatch). Host backends finish a kernel before the launch returns.
#ifdef KOKKOS_ENABLE_HPX_ASYNC_DISPATCH
inline constexpr bool kAsyncKernels = true;
#else
inline constexpr bool kAsyncKernels = !std::is_same_v<ExecSpace::memory_space, HostSpace>;
#endif

/// Kernels on memory the host reads and writes directly (Serial, OpenMP, Threads, HPX).
inline constexpr bool kHostMemory = Kokkos::SpaceAccessibility<HostSpace, MemSpace>::accessible;

/// Host work that moves fewer bytes runs on the calling thread, with no launch: starting the
/// threads (measured here: ≥ 0.5 µs a launch, one thread's team included) costs too much of a
/// stream this short (≈ 8 µs of one core's memory bandwidth).
inline constexpr std::int64_t kCallingThreadBytes = 256 * 1024;

/// Whether host work over `bytes` is best done by the calling thread: one thread, or too little
/// to share. (Only meaningful where kHostMemory.)
inline bool on_calling_thread(std::int64_t bytes) {
  return ExecSpace().concurrency() == 1 || bytes < kCallingThreadBytes;
}

/// Before the host, MPI or a host library reads what kernels wrote: a fence where kernels
/// run asynchronously, nothing on host backends (so none lands inside the FOM window there).
inline void sync_for_host(const char* why) {
  if constexpr (kAsyncKernels) fence(why);
}

// Kokkos::min/max/sqrt/exp/log moved around between 3.4 and 4.x; these are enough here.
template <class T>
KOKKOS_INLINE_FUNCTION T kmin(T a, T b) {
  return b < a ? b : a;
}
template <class T>
KOKKOS_INLINE_FUNCTION T kmax(T a, T b) {
  return a < b ? b : a;
}

}  // namespace minisgd
