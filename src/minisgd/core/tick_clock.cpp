#include "minisgd/core/tick_clock.hpp"

#include <chrono>
#include <fstream>
#include <string>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif

namespace minisgd {

namespace {

using Steady = std::chrono::steady_clock;

bool invariant_counter() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0x80000000u, &a, &b, &c, &d) == 0 || a < 0x80000007u) return false;
  __get_cpuid(0x80000007u, &a, &b, &c, &d);
  return (d >> 8) & 1u;
#else
  return false;
#endif
}

/// Whether Linux still offers the counter as a clock source: it withdraws it when it finds the
/// cores' counters out of step (several sockets, a hypervisor that lets them drift). Where there
/// is no such file the CPUID bit alone decides.
bool kernel_keeps_counter() {
  std::ifstream sources("/sys/devices/system/clocksource/clocksource0/available_clocksource");
  if (!sources) return true;
  std::string name;
  while (sources >> name)
    if (name == "tsc") return true;
  return false;
}

}  // namespace

const bool TickClock::kCounter = invariant_counter() && kernel_keeps_counter();

TickClock::Ticks TickClock::steady_ticks() noexcept {
  return Ticks(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Steady::now().time_since_epoch())
          .count());
}

namespace {

/// Both clocks read once, as the library is loaded (after kCounter: the same translation unit,
/// defined later).
struct Origin {
  TickClock::Ticks ticks = TickClock::now();
  Steady::time_point time = Steady::now();
};
const Origin origin;

}  // namespace

double TickClock::seconds_per_tick() {
  static const double rate = [] {
    if (!kCounter) return 1e-9;
    constexpr double kLeast = 2e-3;
    Ticks ticks = now();
    Steady::time_point time = Steady::now();
    while (std::chrono::duration<double>(time - origin.time).count() < kLeast) {
      ticks = now();
      time = Steady::now();
    }
    return std::chrono::duration<double>(time - origin.time).count() / double(ticks - origin.ticks);
  }();
  return rate;
}

}  // namespace minisgd
