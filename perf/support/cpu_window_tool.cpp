// A Kokkos Tools library for perf/model_check.py --clock cpu: the process CPU seconds spent
// inside minisgd's "minisgd::fom_window" regions (the FOM window), written at exit to
// $MINISGD_CPU_LOG.<rank> as one number. On a machine whose load makes wall time meaningless,
// CPU time still measures the work a rank did. Loaded by Kokkos through KOKKOS_PROFILE_LIBRARY
// (Kokkos 3.x) or KOKKOS_TOOLS_LIBS (Kokkos 4.x).
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "testkit/kokkos_tool.hpp"

namespace {

minisgd::testkit::FomWindow window;
double window_start = 0, window_cpu = 0;

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

}  // namespace

extern "C" {

void kokkosp_init_library(int, std::uint64_t, std::uint32_t, void*) {}

void kokkosp_finalize_library() {
  const char* base = std::getenv("MINISGD_CPU_LOG");
  const std::string path = std::string(base ? base : "fom_cpu") + "." +
                           std::to_string(minisgd::testkit::rank_from_environment());
  if (std::FILE* out = std::fopen(path.c_str(), "w")) {
    std::fprintf(out, "%.9g\n", window_cpu);
    std::fclose(out);
  }
}

void kokkosp_push_profile_region(const char* name) {
  if (window.push(name)) window_start = cpu_seconds();
}

void kokkosp_pop_profile_region() {
  if (window.pop()) window_cpu += cpu_seconds() - window_start;
}

}  // extern "C"
