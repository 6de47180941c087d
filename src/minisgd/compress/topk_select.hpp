#pragma once
// Exact top-k selection by magnitude as Kokkos kernels, deterministic on every backend.
//
// Non-negative floats order like their bit patterns, so the k-th largest |a| is found by a
// radix select on those 31-bit keys, a digit at a time from the top: a histogram of the next
// digit of the keys that still match the digits fixed so far, and the host picks the digit the
// k-th largest has. The digits are bits 30–20 (the exponent and three fraction bits: a
// gradient's magnitudes spread over these bins, where over a top byte of mostly equal
// exponents every count would land in one or two bins, one increment waiting for the last),
// 19–10 and 9–0. Three passes and three copies of 2048 counts to the host fix the threshold key
// K (a sort would cost O(d log d), and a bit at a time took 32 counting passes, each a
// reduction the host waits for). Entries above K are taken, then entries equal to K in index
// order until k are taken, so ties go to the smaller index. A scan writes the selection sorted
// by index.
#include <Kokkos_ScatterView.hpp>

#include <cstdint>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/precision/bits.hpp"

namespace minisgd::compress {

/// One sparse entry on the wire: 4-byte index, 4-byte fp32 value.
struct IndexValue {
  std::int32_t index;
  float value;
};
static_assert(sizeof(IndexValue) == 8, "an (index, value) pair is 8 bytes on the wire");

template <class T>
class TopKSelector {
 public:
  explicit TopKSelector(std::size_t d)
      : keys_("topk_keys", d),
        ties_before_("topk_ties", d),
        counts_("topk_digit_counts", kBins),
        host_counts_(Kokkos::create_mirror_view(counts_)),
        histogram_(counts_) {}

  /// out ← the k entries of a with the largest |a| (fp32 values), sorted by index.
  void select(const Vector<T>& a, const Kokkos::View<IndexValue*, MemSpace>& out);

 private:
  Vector<std::uint32_t> keys_;
  Vector<std::int64_t> ties_before_;
  static constexpr int kBins = 1 << 11;  // the widest digit's values
  Vector<std::int32_t> counts_;          // keys per value of the digit a pass looks at
  Vector<std::int32_t>::HostMirror host_counts_;
  Kokkos::Experimental::ScatterView<std::int32_t*, Vector<std::int32_t>::array_layout, ExecSpace>
      histogram_;  // the counts' layout: contribute requires it (on a GPU LayoutLeft)
};

template <class T>
void TopKSelector<T>::select(const Vector<T>& a, const Kokkos::View<IndexValue*, MemSpace>& out) {
  using Policy = Kokkos::RangePolicy<ExecSpace>;
  const std::int64_t d = std::int64_t(a.extent(0));
  const std::int64_t k = std::int64_t(out.extent(0));
  const auto keys = keys_;
  const auto ties_before = ties_before_;
  Kokkos::parallel_for(
      "minisgd::topk_keys", Policy(0, d), KOKKOS_LAMBDA(const std::int64_t i) {
        keys(i) = precision::to_bits(float(a(i))) & 0x7FFFFFFFu;  // |a| as ordered bits
      });
  // The k-th largest key, a digit at a time: `need` of the keys matching `prefix` under `mask`
  // are still to be taken.
  std::uint32_t prefix = 0, mask = 0;
  std::int64_t need = k;
  const auto histogram = histogram_;
  for (const int shift : {20, 10, 0}) {
    const std::uint32_t top = shift == 20 ? 0x7FFu : 0x3FFu;  // the digit's largest value
    Kokkos::deep_copy(counts_, 0);  // contribute adds the threads' copies (where there are) to it
    histogram_.reset_except(counts_);
    Kokkos::parallel_for(
        "minisgd::topk_digit_histogram", Policy(0, d), KOKKOS_LAMBDA(const std::int64_t i) {
          const std::uint32_t key = keys(i);
          if ((key & mask) == prefix) histogram.access()((key >> shift) & top) += 1;
        });
    Kokkos::Experimental::contribute(counts_, histogram_);
    Kokkos::deep_copy(host_counts_, counts_);
    std::uint32_t digit = top;  // the largest digit whose keys and the larger ones reach `need`
    std::int64_t larger = 0;
    for (; digit > 0 && larger + host_counts_(digit) < need; --digit) larger += host_counts_(digit);
    need -= larger;
    prefix |= digit << shift;
    mask |= top << shift;
  }
  const std::uint32_t K = prefix;
  const std::int64_t ties_taken = need;  // keys equal to K to take, in index order
  Kokkos::parallel_scan(
      "minisgd::topk_ties", Policy(0, d),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& n, const bool final) {
        if (final) ties_before(i) = n;
        n += keys(i) == K;
      });
  Kokkos::parallel_scan(
      "minisgd::topk_compact", Policy(0, d),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& n, const bool final) {
        const bool take = keys(i) > K || (keys(i) == K && ties_before(i) < ties_taken);
        if (take && final) out(n) = IndexValue{std::int32_t(i), float(a(i))};
        n += take;
      });
}

}  // namespace minisgd::compress
