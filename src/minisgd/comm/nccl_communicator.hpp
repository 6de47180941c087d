#pragma once
// NCCL backend of the communicator interface (docs/gpu.md). Compiled only when
// MINISGD_HAVE_NCCL is defined. Free of Kokkos: it takes a CUDA stream (the Kokkos execution
// space instance's, exec.cuda_stream()).
//
// Buffers: device memory (cudaMalloc / Kokkos::CudaSpace) or managed memory go to NCCL as
// they are. Any other pointer (plain host memory: a scalar, a std::vector) is staged through
// a device scratch buffer of this communicator, so the typed helpers (allreduce_value, ...)
// work too; that costs two copies and is meant for small messages.
//
// Streams: each call enqueues its NCCL work on the stream given at construction, then
// synchronizes that stream before it returns. So (1) the buffers must be ready in that
// stream's order (produced on it, or the producer fenced: minisgd fences before every
// collective), and (2) on return the result may be read from any stream or the host, and
// the measured time is the whole collective.
//
// Element types: NCCL's native ones — allreduce sum/max/min on f64, f32, f16, bf16 (NCCL ≥
// 2.10 with CUDA ≥ 11), i8, u8, i32, u32, i64, u64, summed in that type. NCCL has no 16-bit
// integer reduction (i16/u16 allreduce throws). Data movement (allgather, alltoall, sendrecv,
// bcast) works for every type, as bytes.
//
// Counting is the MPI backend's (comm/mpi_communicator.hpp): what a bandwidth-optimal
// algorithm sends per rank — allreduce 2(P−1)/P·n, allgather and alltoall (P−1)·n, bcast n
// at the root — and sendrecv exactly.
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include "minisgd/comm/communicator.hpp"

namespace minisgd::comm {

class NcclCommunicator final : public Communicator {
 public:
  /// Collective over the ranks of `parent`: rank 0 creates the NCCL unique id, MPI_Bcast
  /// hands it to all, each calls ncclCommInitRank on its current CUDA device (the one
  /// Kokkos uses; minisgd's driver picks one per rank by node-local rank). Two ranks on
  /// one GPU are an NCCL error. Throws std::runtime_error naming the failing call.
  NcclCommunicator(MPI_Comm parent, cudaStream_t stream);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool device_buffers() const override { return true; }
  ncclComm_t native() const { return comm_; }
  cudaStream_t stream() const { return stream_; }

  using Communicator::allgather;  // the typed helpers too
  using Communicator::allreduce;
  using Communicator::bcast;
  void allreduce(void* buf, std::size_t count, DType t, Op op) override;
  void allgather(const void* send, void* recv, std::size_t count, DType t) override;
  void alltoall(const void* send, void* recv, std::size_t count, DType t) override;
  void sendrecv(const void* send, std::size_t send_count, int dest, void* recv,
                std::size_t recv_count, int source, DType t) override;
  void bcast(void* buf, std::size_t count, DType t, int root) override;
  /// Synchronizes the stream, then MPI_Barrier on a duplicate of `parent`.
  void barrier() override;

 private:
  /// Runs `enqueue(dsend, drecv)` with device views of send/recv (staged if host memory),
  /// copies a staged recv back, synchronizes the stream; timed and booked under `kind`.
  template <class F>
  void run(Kind kind, std::uint64_t bytes, const void* send, std::size_t send_bytes, void* recv,
           std::size_t recv_bytes, F&& enqueue);
  void* scratch(std::size_t bytes);
  void check(ncclResult_t r, const char* what) const;

  MPI_Comm mpi_ = MPI_COMM_NULL;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
  void* scratch_ = nullptr;
  std::size_t scratch_bytes_ = 0;
};

}  // namespace minisgd::comm
