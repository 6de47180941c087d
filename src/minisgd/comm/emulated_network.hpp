#pragma once
// A communicator decorator that adds the cost of a modelled network to every call, so the
// latency/bandwidth trade-offs of CA-SGD and of compression can be studied on one machine.
// A collective costs ⌈log2 P⌉·α + bytes/β, a point-to-point message α + bytes/β, where bytes
// is what the wrapped backend counts for the call. Figures from such runs are emulated and
// the report says so.
#include <memory>

#include "minisgd/comm/communicator.hpp"

namespace minisgd::comm {

/// Returns after `seconds`, within a microsecond where the host lets it: it sleeps through all
/// but the last millisecond, then polls the clock, yielding the core at each poll to any other
/// runnable rank, as MPI's own polling does when ranks outnumber the cores. A plain sleep
/// overruns by 15–30 µs on a virtual machine, as much as the latencies being emulated.
void wait_out(double seconds);

class EmulatedNetwork final : public Communicator {
 public:
  EmulatedNetwork(std::unique_ptr<Communicator> inner, double latency_s, double bytes_per_s);

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  bool device_buffers() const override { return inner_->device_buffers(); }

  void allreduce(void* buf, std::size_t count, DType t, Op op) override;
  void allgather(const void* send, void* recv, std::size_t count, DType t) override;
  void alltoall(const void* send, void* recv, std::size_t count, DType t) override;
  void sendrecv(const void* send, std::size_t send_count, int dest, void* recv,
                std::size_t recv_count, int source, DType t) override;
  void bcast(void* buf, std::size_t count, DType t, int root) override;
  void barrier() override;

 private:
  /// Waits out the modelled cost of the call just made and books it.
  template <class F>
  void charge(Kind kind, double hops, F&& call);

  std::unique_ptr<Communicator> inner_;
  double latency_s_;
  double bytes_per_s_;
  double log2_p_;
  Stats delay_;
};

}  // namespace minisgd::comm
