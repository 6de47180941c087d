#pragma once
// Collectives on Kokkos views. Host-accessible views go to the backend directly (after a
// fence where kernels run asynchronously: Kokkos 4 does not synchronize with the default
// stream; core/kokkos.hpp, sync_for_host); device views go directly to
// a backend that takes device buffers (NCCL, CUDA-aware MPI: Communicator::device_buffers())
// and travel through host memory for host backends (kept between calls when v is contiguous,
// as minisgd's vectors and matrices are).
#include <vector>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/core/kokkos.hpp"

namespace minisgd::comm {

/// Host memory for device views on their way to a host backend, kept between calls: a step's
/// AllReduce then neither allocates nor frees (freeing host memory fences the device in
/// Kokkos 4; two fences a step on an H200).
template <class T>
T* host_staging(std::size_t count) {
  static std::vector<T> staging;
  if (staging.size() < count) staging.resize(count);
  return staging.data();
}

template <class View>
void allreduce(Communicator& comm, const View& v, Op op = Op::sum) {
  using T = typename View::non_const_value_type;
  constexpr bool on_host =
      Kokkos::SpaceAccessibility<HostSpace, typename View::memory_space>::accessible;
  if (!on_host && !comm.device_buffers() && comm.size() == 1) {
    // One rank: the reduction is v itself. The call still reaches the backend (its counters,
    // an emulated network's time) on host memory it leaves as it is, so v neither travels
    // through host memory nor waits for the kernels writing it.
    comm.allreduce(host_staging<T>(v.span()), v.span(), op);
    return;
  }
  sync_for_host("view handed to the communicator");
  if constexpr (on_host) {
    comm.allreduce(v.data(), v.span(), op);
  } else if (comm.device_buffers()) {
    comm.allreduce(v.data(), v.span(), op);
  } else if (!v.span_is_contiguous()) {
    auto h = Kokkos::create_mirror_view_and_copy(HostSpace(), v);
    comm.allreduce(h.data(), h.span(), op);
    Kokkos::deep_copy(v, h);
  } else {
    using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
    const Kokkos::View<T*, HostSpace, Unmanaged> h(host_staging<T>(v.span()), v.span());
    const Kokkos::View<T*, typename View::memory_space, Unmanaged> d(v.data(), v.span());
    Kokkos::deep_copy(h, d);
    comm.allreduce(h.data(), h.span(), op);
    Kokkos::deep_copy(d, h);
  }
}

}  // namespace minisgd::comm
