#pragma once
#include <string>
#include <vector>

#include "minisgd/compress/aps_codec.hpp"
#include "minisgd/compress/compressor.hpp"
#include "minisgd/compress/form.hpp"
#include "minisgd/compress/staging.hpp"

namespace minisgd::compress {

/// Auto precision scaling: per block of `block_size` entries an AllReduce-MAX of 16-bit
/// exponents picks a power-of-two scale, the scaled gradient travels as (1+E+M)-bit codes
/// (4-bit formats two to a byte) in a reduce-scatter + allgather whose every partial sum is
/// rounded back to the format (optionally with a compensation code per value), and the sum is
/// unscaled exactly. See aps_codec.hpp for why nothing overflows.
template <class T>
class Aps final : public Compressor<T> {
 public:
  Aps(comm::Communicator& comm, std::size_t d, const std::string& format, std::size_t block_size,
      bool kahan, Form form = kNativeForm, bool scaling = true);
  void reduce(const Vector<T>& local, const Vector<T>& sum) override;
  nlohmann::json describe() const override;
  void state(StateArchive&) override {}  // stateless: exponents and payload are per-step scratch
  /// reduce's two forms (form.hpp): loops over host memory, team kernels (public only because
  /// CUDA forbids KOKKOS_LAMBDAs in private member functions).
  void reduce_on_host(const Vector<T>& local, const Vector<T>& sum);
  void reduce_on_device(const Vector<T>& local, const Vector<T>& sum);

 private:
  comm::Communicator& comm_;
  std::size_t d_;
  Form form_;
  std::string format_name_;
  precision::CustomFormat format_;
  std::size_t block_size_;
  aps::Packing packing_;
  int headroom_;
  bool scaling_;
  Staged<std::int16_t> exponents_;
  Staged<std::uint8_t> payload_;
  std::vector<std::uint32_t> codes_;  // the host form's codes of 4-bit formats, before packing
  std::vector<float> values_;         // the host form's value of every code
};

}  // namespace minisgd::compress
