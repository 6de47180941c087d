#pragma once
#include <vector>

#include "minisgd/compress/compressor.hpp"
#include "minisgd/compress/form.hpp"
#include "minisgd/compress/loco_codec.hpp"
#include "minisgd/compress/staging.hpp"

namespace minisgd::compress {

/// Low-bit communication with a moving average of compensation errors (loco_codec.hpp).
/// Each rank compensates its gradient, v = g + e, quantizes it to `bits`-bit codes with an
/// fp32 step per group and updates e (int8 codes + fp32 step per group). The quantized vector
/// is split into P chunks of ⌈d/P⌉ values: an AllToAll hands chunk p to rank p (the
/// reduce-scatter), which sums the P received chunks in fp32, compensates the sum with a second
/// buffer of its own, re-quantizes it the same way, and an AllGather returns every chunk to
/// every rank. Both buffers are reset to zero every `reset_period` steps.
/// Wire per rank and step: 2(P−1)·chunk bytes, chunk = 4·⌈C/G⌉ + ⌈C·bits/8⌉ rounded up to 4.
template <class T>
class Loco final : public Compressor<T> {
 public:
  Loco(comm::Communicator& comm, std::size_t d, int bits, double beta, std::int64_t reset_period,
       std::size_t group_size, Form form = kNativeForm);
  void reduce(const Vector<T>& local, const Vector<T>& sum) override;
  nlohmann::json describe() const override;
  /// Both error buffers and the step (it times the resets).
  void state(StateArchive& a) override;

  /// One compensation buffer: int8 codes and an fp32 step per group.
  struct ErrorBuffer {
    Vector<std::int8_t> codes;
    Vector<float> steps;
  };
  /// reduce's two forms (form.hpp): loops over host memory, team kernels (public only because
  /// CUDA forbids KOKKOS_LAMBDAs in private member functions).
  void reduce_on_host(const Vector<T>& local, const Vector<T>& sum);
  void reduce_on_device(const Vector<T>& local, const Vector<T>& sum);

 private:
  comm::Communicator& comm_;
  std::size_t d_;
  Form form_;
  int bits_;
  float beta_;
  std::int64_t reset_period_;
  loco::ChunkLayout layout_;
  std::int64_t step_ = 0;
  ErrorBuffer sent_error_, owned_error_;
  Vector<float> v_, owned_v_;
  Staged<std::uint8_t> send_, received_, owned_, gathered_;
  std::vector<std::int8_t> codes_;  // the host form's codes between quantizing and packing
};

}  // namespace minisgd::compress
