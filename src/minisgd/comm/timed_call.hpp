#pragma once
#include <chrono>
#include <cstdint>

#include "minisgd/comm/communicator.hpp"

namespace minisgd::comm {

/// Runs one communication call and books it: one call, its bytes, its wall time.
template <class F>
void timed(KindStats& s, std::uint64_t bytes, F&& call) {
  const auto t0 = std::chrono::steady_clock::now();
  call();
  s.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.calls += 1;
  s.bytes_sent += bytes;
}

}  // namespace minisgd::comm
