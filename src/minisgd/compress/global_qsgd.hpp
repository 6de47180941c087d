#pragma once
#include "minisgd/compress/compressor.hpp"
#include "minisgd/compress/form.hpp"
#include "minisgd/compress/staging.hpp"

namespace minisgd::compress {

/// Integer levels of standard-dithering Global-QSGD for P ranks: L = ⌊(2^(bits−1)−1)/P⌋ (at
/// least 1) per rank, and the narrowest integer that holds any sum of P codes, |Σq| ≤ P·L.
struct GlobalLevels {
  int levels;
  int code_bytes;  // 1, 2 or 4
  static GlobalLevels of(int bits, int ranks);
};

/// Global-QSGD: one global scale M = max over ranks of max|g| (an AllReduce-MAX of one number)
/// makes every rank's codes summable as they are.
/// standard: q = SR(g·L/M) summed by MPI's integer AllReduce; the sum is Σq·M/L.
/// exponential: one-byte power-of-two codes of g/(2PM) (so any partial sum stays ≤ 1) summed
/// in the compressed domain by an unbiased pairwise merge over point-to-point messages.
template <class T>
class GlobalQsgd final : public Compressor<T> {
 public:
  GlobalQsgd(comm::Communicator& comm, std::size_t d, int bits, bool exponential,
             std::uint64_t seed, Form form = kNativeForm);
  void reduce(const Vector<T>& local, const Vector<T>& sum) override;
  nlohmann::json describe() const override;
  void state(StateArchive& a) override { a.value("global_qsgd.step", step_); }
  /// Public only because CUDA forbids KOKKOS_LAMBDAs in private or protected member functions.
  void reduce_levels(const Vector<T>& local, const Vector<T>& sum, double scale);
  void reduce_exponential(const Vector<T>& local, const Vector<T>& sum, double scale);

 private:
  comm::Communicator& comm_;
  std::size_t d_;
  Form form_;
  int bits_;
  bool exponential_;
  std::uint64_t seed_;
  std::uint64_t step_ = 0;
  GlobalLevels levels_;
  Staged<std::uint8_t> codes_;
};

}  // namespace minisgd::compress
