// A minimal Kokkos Tools library for tests: writes every region push and pop, every event
// and every fence the tools interface reports, one per line, to $MINISGD_TOOL_LOG.<rank>
// (rank from Open MPI's or PMI's environment, 0 otherwise). Loaded by Kokkos through
// KOKKOS_PROFILE_LIBRARY (Kokkos 3.x) or KOKKOS_TOOLS_LIBS (Kokkos 4.x).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "testkit/kokkos_tool.hpp"

namespace {

std::FILE* out = nullptr;

void line(const char* what, const char* name) {
  if (out) std::fprintf(out, "%s %s\n", what, name ? name : "");
}

}  // namespace

extern "C" {

void kokkosp_init_library(int, std::uint64_t, std::uint32_t, void*) {
  const char* base = std::getenv("MINISGD_TOOL_LOG");
  const std::string path = std::string(base ? base : "kokkos_tool.log") + "." +
                           std::to_string(minisgd::testkit::rank_from_environment());
  out = std::fopen(path.c_str(), "w");
}

void kokkosp_finalize_library() {
  if (out) std::fclose(out);
  out = nullptr;
}

void kokkosp_push_profile_region(const char* name) { line("push", name); }
void kokkosp_pop_profile_region() { line("pop", ""); }
void kokkosp_profile_event(const char* name) { line("event", name); }

void kokkosp_begin_fence(const char* name, std::uint32_t, std::uint64_t* handle) {
  line("fence", name);
  *handle = 0;
}
void kokkosp_end_fence(std::uint64_t) {}

}  // extern "C"
