#pragma once
// Exact top-k selection by magnitude as Kokkos kernels, deterministic on every backend.
//
// Non-negative floats order like their bit patterns, so the k-th largest |a| is found by a
// radix select on those 32-bit keys: 32 counting passes fix the threshold key K bit by bit
// (a sort would cost O(d log d) and Kokkos 3.4 has no key-value sort). Entries above K are
// taken, then entries equal to K in index order until k are taken, so ties go to the smaller
// index. A scan writes the selection sorted by index.
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
  explicit TopKSelector(std::size_t d) : keys_("topk_keys", d), ties_before_("topk_ties", d) {}

  /// out ← the k entries of a with the largest |a| (fp32 values), sorted by index.
  void select(const Vector<T>& a, const Kokkos::View<IndexValue*, MemSpace>& out);

 private:
  Vector<std::uint32_t> keys_;
  Vector<std::int64_t> ties_before_;
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
  std::uint32_t K = 0;
  for (int bit = 31; bit >= 0; --bit) {
    const std::uint32_t candidate = K | (std::uint32_t(1) << bit);
    std::int64_t at_least = 0;
    Kokkos::parallel_reduce(
        "minisgd::topk_count", Policy(0, d),
        KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& n) { n += keys(i) >= candidate; },
        at_least);
    if (at_least >= k) K = candidate;
  }
  std::int64_t above = 0;
  Kokkos::parallel_reduce(
      "minisgd::topk_above", Policy(0, d),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& n) { n += keys(i) > K; }, above);
  const std::int64_t ties_taken = k - above;
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
