#include "minisgd/comm/factory.hpp"

#include <stdexcept>

#include "minisgd/comm/emulated_network.hpp"
#include "minisgd/comm/mpi_communicator.hpp"
#ifdef MINISGD_HAVE_NCCL
#include "minisgd/comm/nccl_communicator.hpp"
#include "minisgd/core/kokkos.hpp"
#endif

namespace minisgd::comm {
namespace {

std::unique_ptr<Communicator> backend(const CommConfig& c, MPI_Comm parent) {
  switch (c.backend) {
    case CommBackend::mpi: return std::make_unique<MpiCommunicator>(parent, c.gpu_aware);
    case CommBackend::nccl:
#ifdef MINISGD_HAVE_NCCL
      return std::make_unique<NcclCommunicator>(parent, Kokkos::Cuda().cuda_stream());
#else
      break;
#endif
  }
  throw std::logic_error(std::string("comm.backend: ") + to_string(c.backend) +
                         " is not in this build");
}

}  // namespace

std::unique_ptr<Communicator> make_communicator(const CommConfig& c, MPI_Comm parent) {
  std::unique_ptr<Communicator> base = backend(c, parent);
  if (!c.emulated()) return base;
  return std::make_unique<EmulatedNetwork>(std::move(base), c.latency_us * 1e-6,
                                           c.bandwidth_GBps * 1e9);
}

}  // namespace minisgd::comm
