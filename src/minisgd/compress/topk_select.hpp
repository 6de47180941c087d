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
// by index. On a host backend the same steps are plain loops over chunks of the keys, each
// chunk with its own counts (select_on_host).
#include <Kokkos_ScatterView.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "minisgd/compress/form.hpp"
#include "minisgd/compress/staging.hpp"
#include "minisgd/core/kokkos.hpp"
#include "minisgd/precision/bits.hpp"

namespace minisgd::compress {

/// One sparse entry on the wire: 4-byte index, 4-byte fp32 value.
struct IndexValue {
  std::int32_t index;
  float value;
};
static_assert(sizeof(IndexValue) == 8, "an (index, value) pair is 8 bytes on the wire");

/// |a| as the 31-bit key the selection orders by (the fp32 value's bits without the sign: NaN
/// above +∞, unlike compress::magnitude_bits).
template <class T>
KOKKOS_INLINE_FUNCTION std::uint32_t magnitude_key(T a) {
  return precision::to_bits(float(a)) & 0x7FFFFFFFu;
}

template <class T>
class TopKSelector {
 public:
  explicit TopKSelector(std::size_t d) : keys_("topk_keys", d) {
    if (kHostMemory) {
      chunk_counts_.resize(chunks(std::int64_t(d)) * kBins);
      chunk_largest_.resize(chunks(std::int64_t(d)));
    } else {
      kernel_buffers(std::int64_t(d));
    }
  }

  /// out ← the k entries of a with the largest |a| (fp32 values), sorted by index, by the
  /// selection's `form` (form.hpp).
  void select(const Vector<T>& a, const Kokkos::View<IndexValue*, MemSpace>& out,
              Form form = kNativeForm);
  /// select's two forms: loops over host memory, kernels (public only for CUDA's rules on
  /// lambdas).
  void select_on_host(const Vector<T>& a, const Kokkos::View<IndexValue*, MemSpace>& out);
  void select_with_kernels(const Vector<T>& a, const Kokkos::View<IndexValue*, MemSpace>& out);

 private:
  // Keys a host work item counts: a chunk's counts stay in the core's cache while it runs.
  static constexpr std::int64_t kHostChunk = 1 << 16;
  static std::int64_t chunks(std::int64_t d) { return (d + kHostChunk - 1) / kHostChunk; }
  std::vector<std::int32_t> chunk_counts_;    // kBins counts a chunk (host backends)
  std::vector<std::uint32_t> chunk_largest_;  // a chunk's largest digit counted
  // The kernels' buffers below, for d keys: allocated up front on a device, on first use on a
  // host (where select_with_kernels runs only when called by name, as the tests do).
  void kernel_buffers(std::int64_t d) {
    if (std::int64_t(ties_before_.extent(0)) < d)
      ties_before_ = Vector<std::int64_t>("topk_ties", d);
    if (counts_.extent(0) == 0) {
      counts_ = Vector<std::int32_t>("topk_digit_counts", kBins);
      host_counts_ = Kokkos::create_mirror_view(counts_);
      histogram_ = decltype(histogram_)(counts_);
    }
  }
  Vector<std::uint32_t> keys_;
  Vector<std::int64_t> ties_before_;
  static constexpr int kBins = 1 << 11;  // the widest digit's values
  Vector<std::int32_t> counts_;          // keys per value of the digit a pass looks at
  Vector<std::int32_t>::HostMirror host_counts_;
  Kokkos::Experimental::ScatterView<std::int32_t*, Vector<std::int32_t>::array_layout, ExecSpace>
      histogram_;  // the counts' layout: contribute requires it (on a GPU LayoutLeft)
};

template <class T>
void TopKSelector<T>::select(const Vector<T>& a, const Kokkos::View<IndexValue*, MemSpace>& out,
                             Form form) {
  if (kHostMemory && checked(form) == Form::host)
    select_on_host(a, out);
  else
    select_with_kernels(a, out);
}

template <class T>
void TopKSelector<T>::select_with_kernels(const Vector<T>& a,
                                          const Kokkos::View<IndexValue*, MemSpace>& out) {
  using Policy = Kokkos::RangePolicy<ExecSpace>;
  const std::int64_t d = std::int64_t(a.extent(0));
  const std::int64_t k = std::int64_t(out.extent(0));
  const auto keys = keys_;
  kernel_buffers(d);
  const auto ties_before = ties_before_;
  Kokkos::parallel_for(
      "minisgd::topk_keys", Policy(0, d),
      KOKKOS_LAMBDA(const std::int64_t i) { keys(i) = magnitude_key(a(i)); });
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

namespace topk_detail {

/// f(i) for every i in [i0, i1), in order, but for the blocks of 16 keys where no key passes
/// `test`: whether any does is a count without an early exit, which the compiler vectorizes (an
/// OR of bools it does not), so a skipped block costs a few instructions.
template <class Test, class F>
inline void for_blocks_with_any(const std::uint32_t* keys, std::int64_t i0, std::int64_t i1,
                                const Test& test, F&& f) {
  constexpr std::int64_t kBlock = 16;
  for (std::int64_t b = i0; b < i1; b += kBlock) {
    const std::int64_t n = std::min(kBlock, i1 - b);
    std::uint32_t hits = 0;
    for (std::int64_t j = 0; j < n; ++j) hits += std::uint32_t(test(keys[b + j]));
    if (hits != 0)
      for (std::int64_t i = b; i < b + n; ++i) f(i);
  }
}

}  // namespace topk_detail

/// The kernels' steps as loops over chunks of kHostChunk keys (a scatter view's increment and the
/// scans cost 4.5 ns a value on a CPU): each digit's counts a chunk at a time into the chunk's
/// own kBins counts (beside the chunk's largest digit counted), summed over the chunks while the
/// host picks the digit from the largest down; then each chunk's keys above K and equal to K are
/// counted, the chunks' places in the output and shares of the ties to take follow in chunk
/// order, and each chunk writes its entries. The passes after the first skip the blocks of keys
/// where none matches. The same entries in the same order as the kernels, for any number of
/// threads.
template <class T>
void TopKSelector<T>::select_on_host(const Vector<T>& a,
                                     const Kokkos::View<IndexValue*, MemSpace>& out) {
  using topk_detail::for_blocks_with_any;
  const std::int64_t d = std::int64_t(a.extent(0)), k = std::int64_t(out.extent(0));
  if (d == 0 || k == 0) return;
  const std::int64_t n_chunks = chunks(d);
  const T* const x = a.data();
  std::uint32_t* const keys = keys_.data();
  std::int32_t* const counts = chunk_counts_.data();
  std::uint32_t* const largest = chunk_largest_.data();
  IndexValue* const taken = out.data();
  const auto range = [=](std::size_t c) {
    return std::make_pair(std::int64_t(c) * kHostChunk,
                          std::min(d, (std::int64_t(c) + 1) * kHostChunk));
  };
  std::uint32_t prefix = 0, mask = 0;
  std::int64_t need = k;
  for (const int shift : {20, 10, 0}) {
    const std::uint32_t top = shift == 20 ? 0x7FFu : 0x3FFu;
    host_for("minisgd::topk_digit_histogram", std::size_t(n_chunks), [=](std::size_t c) {
      std::int32_t* const h = counts + c * kBins;
      std::fill(h, h + top + 1, 0);
      const auto [i0, i1] = range(c);
      std::uint32_t most = 0;
      if (shift == 20) {
        // Four keys at a time into four sets of counts: a gradient's keys crowd into a few
        // bins, and one increment would wait for the last to the same bin (1.7 ns a key). Not
        // for a few keys, where clearing and adding the three more sets would cost more.
        const bool four_sets = i1 - i0 >= 8 * kBins;
        std::int32_t more[3][kBins];
        if (four_sets) std::fill(&more[0][0], &more[0][0] + 3 * kBins, 0);
        const auto key_of = [=](std::int64_t i) {
          const std::uint32_t key = magnitude_key(x[i]);
          keys[i] = key;
          return key;
        };
        std::int64_t i = i0;
        for (; four_sets && i + 4 <= i1; i += 4) {
          const std::uint32_t k0 = key_of(i), k1 = key_of(i + 1), k2 = key_of(i + 2),
                              k3 = key_of(i + 3);
          most = std::max(most, std::max(std::max(k0, k1), std::max(k2, k3)));
          h[k0 >> 20] += 1;
          more[0][k1 >> 20] += 1;
          more[1][k2 >> 20] += 1;
          more[2][k3 >> 20] += 1;
        }
        for (; i < i1; ++i) {
          const std::uint32_t key = key_of(i);
          most = std::max(most, key);
          h[key >> 20] += 1;
        }
        if (four_sets)
          for (std::int64_t v = 0; v < kBins; ++v) h[v] += more[0][v] + more[1][v] + more[2][v];
      } else {
        const auto matches = [=](std::uint32_t key) { return (key & mask) == prefix; };
        for_blocks_with_any(keys, i0, i1, matches, [&](std::int64_t i) {
          if (!matches(keys[i])) return;
          most = std::max(most, keys[i]);
          h[(keys[i] >> shift) & top] += 1;
        });
      }
      largest[c] = (most >> shift) & top;
    });
    std::uint32_t digit = *std::max_element(largest, largest + n_chunks);
    if (n_chunks > 1)  // the chunks' counts summed into the first chunk's
      for (std::uint32_t v = 0; v <= digit; ++v)
        for (std::int64_t c = 1; c < n_chunks; ++c) counts[v] += counts[c * kBins + v];
    std::int64_t larger = 0;
    for (; digit > 0 && larger + counts[digit] < need; --digit) larger += counts[digit];
    need -= larger;
    prefix |= digit << shift;
    mask |= top << shift;
  }
  const std::uint32_t K = prefix;
  const auto candidate = [=](std::uint32_t key) { return key >= K; };
  // A chunk's keys above K and equal to K (its counts' first two entries), then where its
  // entries go and how many ties before it were taken (the next two).
  host_for("minisgd::topk_count_taken", std::size_t(n_chunks), [=](std::size_t c) {
    const auto [i0, i1] = range(c);
    std::int32_t above = 0, ties = 0;
    for_blocks_with_any(keys, i0, i1, candidate, [&](std::int64_t i) {
      above += keys[i] > K;
      ties += keys[i] == K;
    });
    counts[c * kBins] = above;
    counts[c * kBins + 1] = ties;
  });
  std::int64_t place = 0, ties_seen = 0;
  for (std::int64_t c = 0; c < n_chunks; ++c) {
    const std::int64_t above = counts[c * kBins], ties = counts[c * kBins + 1];
    counts[c * kBins + 2] = std::int32_t(place);
    counts[c * kBins + 3] = std::int32_t(ties_seen);
    place += above + std::clamp<std::int64_t>(need - ties_seen, 0, ties);
    ties_seen += ties;
  }
  const std::int64_t ties_taken = need;
  host_for("minisgd::topk_compact", std::size_t(n_chunks), [=](std::size_t c) {
    const auto [i0, i1] = range(c);
    std::int64_t n = counts[c * kBins + 2], ties_before = counts[c * kBins + 3];
    for_blocks_with_any(keys, i0, i1, candidate, [&](std::int64_t i) {
      const std::uint32_t key = keys[i];
      if (key > K || (key == K && ties_before < ties_taken))
        taken[n++] = IndexValue{std::int32_t(i), float(x[i])};
      ties_before += key == K;
    });
  });
}

}  // namespace minisgd::compress
