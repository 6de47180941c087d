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

template <class View>
void allreduce(Communicator& comm, const View& v, Op op = Op::sum) {
  sync_for_host("view handed to the communicator");
  if constexpr (Kokkos::SpaceAccessibility<HostSpace, typename View::memory_space>::accessible) {
    comm.allreduce(v.data(), v.span(), op);
  } else if (comm.device_buffers()) {
    comm.allreduce(v.data(), v.span(), op);
  } else if (!v.span_is_contiguous()) {
    auto h = Kokkos::create_mirror_view_and_copy(HostSpace(), v);
    comm.allreduce(h.data(), h.span(), op);
    Kokkos::deep_copy(v, h);
  } else {
    // Through host memory kept between calls: a step's AllReduce then neither allocates nor
    // frees (freeing host memory fences the device in Kokkos 4; two fences a step on an H200).
    using T = typename View::non_const_value_type;
    using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
    static std::vector<T> staging;
    if (staging.size() < v.span()) staging.resize(v.span());
    const Kokkos::View<T*, HostSpace, Unmanaged> h(staging.data(), v.span());
    const Kokkos::View<T*, typename View::memory_space, Unmanaged> d(v.data(), v.span());
    Kokkos::deep_copy(h, d);
    comm.allreduce(h.data(), h.span(), op);
    Kokkos::deep_copy(d, h);
  }
}

}  // namespace minisgd::comm
