#pragma once
// Named phases for Kokkos Tools (the kernel logger, space-time stack, Nsight Systems and VTune
// connectors): every phase of a run is a region, so a tool shows it by name. Regions cost
// nothing measurable without a tool and never fence (docs/output.md, "Profiling").
#include <string>

#include "minisgd/core/kokkos.hpp"

namespace minisgd {

/// A Kokkos Tools region for the lifetime of the object:
/// Kokkos::Tools::ScopedRegion does, written out so Kokkos 3.4 builds have it too.
class Region {
 public:
  explicit Region(const char* name) : active_(Kokkos::Tools::profileLibraryLoaded()) {
    if (active_) Kokkos::Tools::pushRegion(name);
  }
  explicit Region(const std::string& name) : Region(name.c_str()) {}
  /// The region "<prefix><name>", its name put together only when a tool listens.
  Region(const char* prefix, const char* name) : active_(Kokkos::Tools::profileLibraryLoaded()) {
    if (active_) Kokkos::Tools::pushRegion(std::string(prefix) + name);
  }
  ~Region() {
    if (active_) Kokkos::Tools::popRegion();
  }
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

 private:
  bool active_;
};

}  // namespace minisgd
