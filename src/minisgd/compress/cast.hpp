#pragma once
#include "minisgd/compress/compressor.hpp"
#include "minisgd/compress/staging.hpp"

namespace minisgd::compress {

/// The gradient cast to fp16 or bf16 and summed by a reduce-scatter + allgather of 16-bit
/// values in which every partial sum is rounded back to the format (as a 16-bit AllReduce
/// does). fp16 overflows to inf above 65504: the baseline APS improves on.
template <class T>
class Cast final : public Compressor<T> {
 public:
  Cast(comm::Communicator& comm, std::size_t d, CastFormat format);
  void reduce(const Vector<T>& local, const Vector<T>& sum) override;
  nlohmann::json describe() const override;
  void state(StateArchive&) override {}  // stateless: the payload is per-step scratch
  /// Public only because CUDA forbids KOKKOS_LAMBDAs in private or protected member functions.
  template <class F>
  void reduce_as(const Vector<T>& local, const Vector<T>& sum);

 private:
  comm::Communicator& comm_;
  CastFormat format_;
  Staged<std::uint16_t> payload_;
};

}  // namespace minisgd::compress
