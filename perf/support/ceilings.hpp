#pragma once
// Machine ceilings measured in the benchmark's own process, so every rate can be reported
// as a fraction of what this machine actually sustains.

namespace minisgd::perf {

/// Sustained memory bandwidth (bytes/s) of a Kokkos triad a = b + s·c over arrays much larger
/// than the caches, best of several repetitions. Measured once, on first use.
double triad_bandwidth();

}  // namespace minisgd::perf
