#pragma once
// A payload built by kernels in the execution space's memory and handed to a host-buffer
// communicator through a mirror (the same memory on host backends: the copies are no-ops).
#include <string>

#include "minisgd/core/kokkos.hpp"

namespace minisgd::compress {

template <class E>
struct Staged {
  Kokkos::View<E*, MemSpace> device;
  typename Kokkos::View<E*, MemSpace>::HostMirror host;

  Staged() = default;
  Staged(const std::string& label, std::size_t n)
      : device(label, n), host(Kokkos::create_mirror_view(device)) {}

  /// Host copy of what the kernels wrote (fences first where kernels run asynchronously: Kokkos 4
  /// does not sync the stream).
  E* to_host() {
    sync_for_host("staged payload read on the host");
    Kokkos::deep_copy(host, device);
    return host.data();
  }
  void to_device() { Kokkos::deep_copy(device, host); }
  std::size_t size() const { return device.extent(0); }
};

/// Runs f(i) for i in [0, n) on the host (merges inside the collectives work on host buffers).
template <class F>
void host_for(const char* label, std::size_t n, const F& f) {
  Kokkos::parallel_for(label, Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, n), f);
}

}  // namespace minisgd::compress
