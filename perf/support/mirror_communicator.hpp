#pragma once
// Rank 0 of `ranks` ranks that all hold this rank's data, in one process and with no network:
// every message arrives at once and carries what this rank sent. Runs a collective's local
// work at P ranks (the merges a compressor applies to the payloads it receives, the copies of
// the gather) so that it can be timed apart from the network. The reductions of allreduce are
// the MPI library's and are not modelled: the buffer is left as it is.
#include <algorithm>
#include <cstring>

#include "minisgd/comm/communicator.hpp"

namespace minisgd::perf {

class MirrorCommunicator final : public comm::Communicator {
 public:
  explicit MirrorCommunicator(int ranks) : ranks_(ranks) {}
  int rank() const override { return 0; }
  int size() const override { return ranks_; }
  void allreduce(void*, std::size_t, comm::DType, comm::Op) override {}
  void allgather(const void* send, void* recv, std::size_t count, comm::DType t) override {
    const std::size_t bytes = count * comm::size_of(t);
    for (int r = 0; r < ranks_; ++r)
      std::memmove(static_cast<char*>(recv) + std::size_t(r) * bytes, send, bytes);
  }
  // Every rank sends rank 0 its block 0, which is this rank's block 0.
  void alltoall(const void* send, void* recv, std::size_t count, comm::DType t) override {
    const std::size_t bytes = count * comm::size_of(t);
    for (int r = 0; r < ranks_; ++r)
      std::memmove(static_cast<char*>(recv) + std::size_t(r) * bytes, send, bytes);
  }
  void sendrecv(const void* send, std::size_t send_count, int, void* recv, std::size_t recv_count,
                int, comm::DType t) override {
    std::memmove(recv, send, std::min(send_count, recv_count) * comm::size_of(t));
  }
  void bcast(void*, std::size_t, comm::DType, int) override {}
  void barrier() override {}

 private:
  int ranks_;
};

}  // namespace minisgd::perf
