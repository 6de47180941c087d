#pragma once
#include <cstdint>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/core/tick_clock.hpp"

namespace minisgd::comm {

/// Runs one communication call and books it: one call, its bytes, its wall time.
template <class F>
void timed(KindStats& s, std::uint64_t bytes, F&& call) {
  const TickClock::Ticks t0 = TickClock::now();
  call();
  s.seconds += TickClock::seconds(TickClock::now() - t0);
  s.calls += 1;
  s.bytes_sent += bytes;
}

}  // namespace minisgd::comm
