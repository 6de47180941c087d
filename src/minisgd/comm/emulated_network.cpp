#include "minisgd/comm/emulated_network.hpp"

#include <chrono>
#include <cmath>
#include <thread>

namespace minisgd::comm {

void wait_out(double seconds) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(
                                           std::chrono::duration<double>(seconds));
  constexpr auto polled = std::chrono::milliseconds(1);  // covers a sleep's overrun
  if (deadline - clock::now() > 2 * polled) std::this_thread::sleep_until(deadline - polled);
  while (clock::now() < deadline) std::this_thread::yield();
}

EmulatedNetwork::EmulatedNetwork(std::unique_ptr<Communicator> inner, double latency_s,
                                 double bytes_per_s)
    : inner_(std::move(inner)),
      latency_s_(latency_s),
      bytes_per_s_(bytes_per_s),
      log2_p_(std::ceil(std::log2(double(inner_->size())))) {}

template <class F>
void EmulatedNetwork::charge(Kind kind, double hops, F&& call) {
  const std::uint64_t before = inner_->stats()[kind].bytes_sent;
  call();
  const double bytes = double(inner_->stats()[kind].bytes_sent - before);
  const double cost = inner_->size() > 1 ? hops * latency_s_ + bytes / bytes_per_s_ : 0.0;
  if (cost > 0) wait_out(cost);
  delay_[kind].seconds += cost;
  stats_ = inner_->stats();
  for (int k = 0; k < int(Kind::count_); ++k) stats_.kinds[k].seconds += delay_.kinds[k].seconds;
}

void EmulatedNetwork::allreduce(void* buf, std::size_t count, DType t, Op op) {
  charge(Kind::allreduce, log2_p_, [&] { inner_->allreduce(buf, count, t, op); });
}
void EmulatedNetwork::allgather(const void* send, void* recv, std::size_t count, DType t) {
  charge(Kind::allgather, log2_p_, [&] { inner_->allgather(send, recv, count, t); });
}
void EmulatedNetwork::alltoall(const void* send, void* recv, std::size_t count, DType t) {
  charge(Kind::alltoall, log2_p_, [&] { inner_->alltoall(send, recv, count, t); });
}
void EmulatedNetwork::sendrecv(const void* send, std::size_t send_count, int dest, void* recv,
                               std::size_t recv_count, int source, DType t) {
  charge(Kind::sendrecv, 1.0,
         [&] { inner_->sendrecv(send, send_count, dest, recv, recv_count, source, t); });
}
void EmulatedNetwork::bcast(void* buf, std::size_t count, DType t, int root) {
  charge(Kind::bcast, log2_p_, [&] { inner_->bcast(buf, count, t, root); });
}
void EmulatedNetwork::barrier() {
  charge(Kind::barrier, log2_p_, [&] { inner_->barrier(); });
}

}  // namespace minisgd::comm
