#pragma once
// Collectives on Kokkos views. Host-accessible views go to the backend directly (after a
// fence where kernels run asynchronously: Kokkos 4 does not synchronize with the default
// stream; core/kokkos.hpp, sync_for_host); device views go directly to
// a backend that takes device buffers (NCCL, CUDA-aware MPI: Communicator::device_buffers())
// and travel through a host mirror for host backends.
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
  } else {
    auto h = Kokkos::create_mirror_view_and_copy(HostSpace(), v);
    comm.allreduce(h.data(), h.span(), op);
    Kokkos::deep_copy(v, h);
  }
}

}  // namespace minisgd::comm
