#pragma once
// The clock of the phase timers and the communication counters, read at every phase boundary
// of every step: SGD's step on a short row takes about a microsecond, and a steady_clock read
// (a vDSO call that orders the counter read with a fence) 27-44 ns on a virtual machine, where
// the time-stamp counter read alone takes 10-13 ns. So the counter where it ticks at one
// constant rate whatever the core's frequency or sleep state (x86's invariant TSC, CPUID
// 0x80000007 EDX bit 8) and Linux has not withdrawn it as a clock source, else steady_clock. The
// read is not ordered with the instructions around it: an interval is off by at most a few tens of
// cycles, below what a phase timer resolves. Ticks become seconds at the rate measured against
// steady_clock (seconds()).
#include <cstdint>

namespace minisgd {

class TickClock {
 public:
  using Ticks = std::int64_t;

  /// Now, in ticks.
  static Ticks now() noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (kCounter) {
      std::uint32_t lo, hi;
      asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
      return Ticks((std::uint64_t(hi) << 32) | lo);
    }
#endif
    return steady_ticks();
  }

  /// An interval of `ticks` ticks in seconds.
  static double seconds(Ticks ticks) { return double(ticks) * seconds_per_tick(); }

  /// Whether now() reads the time-stamp counter (else steady_clock).
  static bool counter() noexcept { return kCounter; }

  /// Seconds a tick: steady_clock's period, or the counter's measured over the process's life
  /// so far when first asked (at least 2 ms after the library was loaded, waiting if need be:
  /// a read pair's skew of ~50 ns is then ≤ 3e-5 of it), then kept.
  static double seconds_per_tick();

 private:
  static Ticks steady_ticks() noexcept;
  static const bool kCounter;
};

}  // namespace minisgd
