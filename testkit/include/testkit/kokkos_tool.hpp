#pragma once
// What minisgd's Kokkos Tools libraries (tests/tools, perf/support/*_tool.cpp) share. Each is a
// plain shared library with no Kokkos or minisgd dependency; include this in one source of it.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace minisgd::testkit {

/// The MPI rank from the launcher's environment (Open MPI, PMI, PMIx), 0 without one.
inline int rank_from_environment() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char* r = std::getenv(v)) return std::atoi(r);
  return 0;
}

/// Whether the profile regions open now include minisgd's FOM window ("minisgd::fom_window"):
/// feed it every region push and pop.
class FomWindow {
 public:
  /// A region opened; true when it is the FOM window.
  bool push(const char* name) {
    const bool window = std::strcmp(name, "minisgd::fom_window") == 0;
    open_ += window;
    stack_.push_back(window);
    return window;
  }
  /// A region closed; true when it was the FOM window.
  bool pop() {
    if (stack_.empty()) return false;
    const bool window = stack_.back();
    open_ -= window;
    stack_.pop_back();
    return window;
  }
  bool inside() const { return open_ > 0; }

 private:
  std::vector<bool> stack_;  // one entry per open region: is it the FOM window?
  int open_ = 0;
};

}  // namespace minisgd::testkit

extern "C" {

// Kokkos 4 fences the device around every kernel for a tool unless the tool says it needs no
// such fencing (on an H200, 36 of a step's 48 fences); these tools need none. Kokkos 3.x
// never asks.
struct Kokkos_Tools_ToolSettings {
  bool requires_global_fencing;
  bool padding[255];
};
void kokkosp_request_tool_settings(const std::uint32_t, Kokkos_Tools_ToolSettings* settings) {
  settings->requires_global_fencing = false;
}

}  // extern "C"
