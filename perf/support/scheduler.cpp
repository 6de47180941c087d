#include "support/scheduler.hpp"

#include <sched.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "minisgd/comm/emulated_network.hpp"

namespace minisgd::perf {

namespace {

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Pins the calling thread to `cpu` (a no-op where affinity cannot be set).
void pin_to(int cpu) {
#ifdef __linux__
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
#else
  (void)cpu;
#endif
}

}  // namespace

int node_cores() { return int(std::max(sysconf(_SC_NPROCESSORS_ONLN), 1L)); }

double context_switch_seconds() {
#ifdef __linux__
  cpu_set_t saved;
  const bool restore = sched_getaffinity(0, sizeof saved, &saved) == 0;
  const int cpu = std::max(sched_getcpu(), 0);
#else
  const int cpu = 0;
#endif
  pin_to(cpu);
  constexpr int turns = 2000;
  std::vector<double> blocks;
  for (int r = 0; r < 5; ++r) {
    std::atomic<int> turn{0};
    const auto play = [&](int me) {  // waits for its turn, yielding the core, then passes it
      for (int k = me; k < 2 * turns; k += 2) {
        while (turn.load(std::memory_order_acquire) != k) std::this_thread::yield();
        turn.store(k + 1, std::memory_order_release);
      }
    };
    const double t0 = seconds_now();
    std::thread other([&] {
      pin_to(cpu);
      play(1);
    });
    play(0);
    other.join();
    blocks.push_back((seconds_now() - t0) / (2 * turns));
  }
#ifdef __linux__
  if (restore) sched_setaffinity(0, sizeof saved, &saved);
#endif
  return median(blocks);
}

double wait_overshoot_seconds(const std::function<void()>& meet) {
  const double asked = 20e-6;
  const auto block = [&](bool wait) {  // seconds per {wait, meet}
    const double t0 = seconds_now();
    for (int k = 0; k < 100; ++k) {
      if (wait) comm::wait_out(asked);
      if (meet) meet();
    }
    return (seconds_now() - t0) / 100;
  };
  std::vector<double> blocks;
  for (int r = 0; r < 5; ++r) blocks.push_back(block(true) - (meet ? block(false) : 0.0) - asked);
  return median(blocks);
}

}  // namespace minisgd::perf
