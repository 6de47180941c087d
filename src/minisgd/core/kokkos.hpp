#pragma once
// The one place that knows Kokkos 3.4 and 4.x differ: everything else includes this.
#include <Kokkos_Core.hpp>

namespace minisgd {

using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;
using HostSpace = Kokkos::HostSpace;

template <class T>
using Vector = Kokkos::View<T*, MemSpace>;
/// Row-major, so a batch of consecutive rows is one contiguous block (no gather).
template <class T>
using Matrix = Kokkos::View<T**, Kokkos::LayoutRight, MemSpace>;

/// fence() without a label: fence("label") needs Kokkos 3.5+.
inline void fence() { Kokkos::fence(); }

// Kokkos::min/max/sqrt/exp/log moved around between 3.4 and 4.x; these are enough here.
template <class T>
KOKKOS_INLINE_FUNCTION T kmin(T a, T b) { return b < a ? b : a; }
template <class T>
KOKKOS_INLINE_FUNCTION T kmax(T a, T b) { return a < b ? b : a; }

}  // namespace minisgd
