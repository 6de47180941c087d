// A Kokkos Tools library for perf/launches.py: what minisgd launches inside its FOM window
// ("minisgd::fom_window" regions): kernels (parallel_for, _reduce, _scan) by name, deep copies
// and fences. On a GPU each launch costs a few microseconds whatever it does, so launches per
// step bound how short a step can be; so does each fence (a wait for the device to drain).
// Written at exit to $MINISGD_LAUNCH_LOG.<rank>, a line per count: "kernels N", "deep_copies N",
// "fences N", then "kernel COUNT NAME" and "fence COUNT NAME" for each name.
// Loaded by Kokkos through KOKKOS_PROFILE_LIBRARY (Kokkos 3.x) or KOKKOS_TOOLS_LIBS (4.x).
// (Kokkos 3.4 reports no fences to tools; cuBLAS and NCCL calls are not Kokkos launches.)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "testkit/kokkos_tool.hpp"

namespace {

minisgd::testkit::FomWindow window;
std::uint64_t kernels = 0, deep_copies = 0, fences = 0;
std::map<std::string, std::uint64_t> by_name, fences_by_name;

void kernel(const char* name) {
  if (!window.inside()) return;
  ++kernels;
  ++by_name[name];
}

}  // namespace

extern "C" {

struct SpaceHandle {
  char name[64];
};

void kokkosp_init_library(int, std::uint64_t, std::uint32_t, void*) {}

void kokkosp_finalize_library() {
  const char* base = std::getenv("MINISGD_LAUNCH_LOG");
  const std::string path = std::string(base ? base : "launches") + "." +
                           std::to_string(minisgd::testkit::rank_from_environment());
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (!out) return;
  std::fprintf(out, "kernels %llu\ndeep_copies %llu\nfences %llu\n",
               static_cast<unsigned long long>(kernels),
               static_cast<unsigned long long>(deep_copies),
               static_cast<unsigned long long>(fences));
  for (const auto& [name, n] : by_name)
    std::fprintf(out, "kernel %llu %s\n", static_cast<unsigned long long>(n), name.c_str());
  for (const auto& [name, n] : fences_by_name)
    std::fprintf(out, "fence %llu %s\n", static_cast<unsigned long long>(n), name.c_str());
  std::fclose(out);
}

void kokkosp_push_profile_region(const char* name) { window.push(name); }
void kokkosp_pop_profile_region() { window.pop(); }

void kokkosp_begin_parallel_for(const char* name, std::uint32_t, std::uint64_t*) { kernel(name); }
void kokkosp_end_parallel_for(std::uint64_t) {}
void kokkosp_begin_parallel_reduce(const char* name, std::uint32_t, std::uint64_t*) {
  kernel(name);
}
void kokkosp_end_parallel_reduce(std::uint64_t) {}
void kokkosp_begin_parallel_scan(const char* name, std::uint32_t, std::uint64_t*) { kernel(name); }
void kokkosp_end_parallel_scan(std::uint64_t) {}

void kokkosp_begin_deep_copy(SpaceHandle, const char*, const void*, SpaceHandle, const char*,
                             const void*, std::uint64_t) {
  deep_copies += window.inside();
}
void kokkosp_end_deep_copy() {}

void kokkosp_begin_fence(const char* name, std::uint32_t, std::uint64_t* handle) {
  *handle = 0;
  if (!window.inside()) return;
  ++fences;
  ++fences_by_name[name];
}
void kokkosp_end_fence(std::uint64_t) {}

}  // extern "C"
