#pragma once
#include "minisgd/compress/compressor.hpp"
#include "minisgd/compress/form.hpp"
#include "minisgd/compress/staging.hpp"

namespace minisgd::compress {

/// QSGD baseline: each rank quantizes with its own scale, the 2-norm of its gradient, and the
/// codes are all-gathered ((P−1)·(d·code bytes + 8) per rank) and decoded rank by rank.
/// standard: q = SR(g·s/‖g‖) with s = 2^(bits−1) − 1 levels, int8 (bits ≤ 8) or int16 codes;
/// exponential: one-byte power-of-two codes of g/(2‖g‖) (dithering.hpp).
template <class T>
class Qsgd final : public Compressor<T> {
 public:
  Qsgd(comm::Communicator& comm, std::size_t d, int bits, bool exponential, std::uint64_t seed,
       Form form = kNativeForm);
  void reduce(const Vector<T>& local, const Vector<T>& sum) override;
  nlohmann::json describe() const override;
  void state(StateArchive& a) override { a.value("qsgd.step", step_); }

 private:
  comm::Communicator& comm_;
  std::size_t d_;
  Form form_;
  int bits_;
  bool exponential_;
  std::uint64_t seed_;
  std::uint64_t step_ = 0;
  int code_bytes_;
  Staged<std::uint8_t> codes_, gathered_;
  Staged<double> scales_;
};

}  // namespace minisgd::compress
