#pragma once
// What the operating system's scheduler costs a rank (perf/calibrate, docs/performance_model.md):
// the cores ranks can share, a context switch between two runnable processes on one core, and
// how much longer than asked comm.emulate's wait lasts.
#include <functional>

namespace minisgd::perf {

/// The node's online cores (not this process's affinity: mpirun binds each rank to one).
int node_cores();

/// Seconds of one hand-over between two threads on one core that take turns (each yields
/// until the other has run): the wait a message costs when its receiver is switched out.
/// The median of five blocks.
double context_switch_seconds();

/// How much longer than asked comm.emulate's wait of 20 µs lasts (comm::wait_out; the median
/// of five blocks of 100). With `meet` (the ranks meeting in a collective after each wait, as a
/// step under comm.emulate does) the wait for the latest of the ranks, the blocks of `meet`
/// alone subtracted.
double wait_overshoot_seconds(const std::function<void()>& meet = {});

}  // namespace minisgd::perf
