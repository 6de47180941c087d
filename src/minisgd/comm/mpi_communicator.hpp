#pragma once
#include <mpi.h>

#include <array>

#include "minisgd/comm/communicator.hpp"

namespace minisgd::comm {

/// MPI backend on host buffers. Owns a duplicate of the given communicator, so traffic of
/// different users (training, evaluation, tests) never mixes and is counted apart.
///
/// Bytes sent by MPI's own collectives are not observable, so they are counted as what a
/// bandwidth-optimal algorithm sends per rank (docs/design.md, "Communication counters"): allreduce
/// 2(P-1)/P·n, allgather and alltoall (P-1)·n, bcast n at the root; sendrecv counts exactly.
///
/// f16 and bf16 allreduce use user-defined MPI operations that round every partial result
/// to the format (a correctly rounded 16-bit addition per reduction step).
class MpiCommunicator final : public Communicator {
 public:
  /// gpu_aware: the MPI library is CUDA-aware, so device views are handed to it as they are
  /// (comm.gpu_aware; reductions on device memory are then the library's business).
  explicit MpiCommunicator(MPI_Comm parent = MPI_COMM_WORLD, bool gpu_aware = false);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool device_buffers() const override { return gpu_aware_; }
  MPI_Comm native() const { return comm_; }

  void allreduce(void* buf, std::size_t count, DType t, Op op) override;
  void allgather(const void* send, void* recv, std::size_t count, DType t) override;
  void alltoall(const void* send, void* recv, std::size_t count, DType t) override;
  void sendrecv(const void* send, std::size_t send_count, int dest, void* recv,
                std::size_t recv_count, int source, DType t) override;
  void bcast(void* buf, std::size_t count, DType t, int root) override;
  void barrier() override;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  bool gpu_aware_ = false;
  std::array<MPI_Op, 3> f16_ops_{};  // indexed by Op
  std::array<MPI_Op, 3> bf16_ops_{};
};

}  // namespace minisgd::comm
