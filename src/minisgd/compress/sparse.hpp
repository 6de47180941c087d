#pragma once
// Kernels shared by the sparsifying compressors: error feedback (what was not sent stays in a
// residual and is added to the next gradient) and scattering (index, value) lists.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include "minisgd/compress/staging.hpp"
#include "minisgd/compress/topk_select.hpp"

namespace minisgd::compress {

/// a = g + r, and r = a: until keep_unsent takes out what was sent, all of a is unsent (one
/// pass, where a copy of a into r after the selection was a second).
template <class T>
void add_residual(const Vector<T>& g, const Vector<T>& r, const Vector<T>& a) {
  Kokkos::parallel_for(
      "minisgd::add_residual", Kokkos::RangePolicy<ExecSpace>(0, a.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i) { r(i) = a(i) = g(i) + r(i); });
}

/// r = a minus the entries sent (their fp32 values, so an fp64 a keeps its rounding error), r
/// holding a since add_residual.
template <class T, class PairView>
void keep_unsent(const Vector<T>& a, const PairView& sent, const Vector<T>& r) {
  Kokkos::parallel_for(
      "minisgd::keep_unsent", Kokkos::RangePolicy<ExecSpace>(0, sent.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t j) {
        const std::int32_t i = sent(j).index;
        r(i) = a(i) - T(sent(j).value);
      });
}

/// out(index) += value for every pair; the indices of one list must be distinct.
template <class PairView, class T>
void scatter_add(const PairView& pairs, const Vector<T>& out) {
  Kokkos::parallel_for(
      "minisgd::scatter_add", Kokkos::RangePolicy<ExecSpace>(0, pairs.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t j) { out(pairs(j).index) += T(pairs(j).value); });
}

/// k = ⌈density·d⌉, at least 1; indices must fit the 32-bit wire index.
inline std::size_t top_k_count(std::size_t d, double density) {
  if (d > std::size_t(INT32_MAX))
    throw std::invalid_argument("top-k indices are 32-bit: d too large");
  const auto k = std::size_t(std::ceil(density * double(d)));
  return k < 1 ? 1 : (k > d ? d : k);
}

/// Host backends: the indices where a top-k's residual may be nonzero (every other residual
/// and accumulated entry is +0), one bit per index beside the list.
class ResidualSupport {
 public:
  ResidualSupport() = default;
  explicit ResidualSupport(std::size_t d) : bits_((d + 63) / 64, 0) {}
  bool contains(std::int32_t i) const { return bits_[std::uint32_t(i) / 64] >> (i % 64) & 1; }
  void add(std::int32_t i) {
    if (contains(i)) return;
    bits_[std::uint32_t(i) / 64] |= std::uint64_t(1) << (i % 64);
    list_.push_back(i);
  }
  /// Drops the indices where keep(i) is false.
  template <class Keep>
  void keep_if(const Keep& keep) {
    std::size_t n = 0;
    for (const std::int32_t i : list_) {
      if (keep(i))
        list_[n++] = i;
      else
        bits_[std::uint32_t(i) / 64] &= ~(std::uint64_t(1) << (i % 64));
    }
    list_.resize(n);
  }
  void clear() {
    for (const std::int32_t i : list_) bits_[std::uint32_t(i) / 64] = 0;
    list_.clear();
  }
  const std::vector<std::int32_t>& indices() const { return list_; }

 private:
  std::vector<std::uint64_t> bits_;
  std::vector<std::int32_t> list_;
};

/// A local top-k with error feedback: a = g + r, select the k largest |a|, and keep in r what
/// was not sent.
///
/// On host backends, while each step hands over the columns its gradient touched
/// (set_touched), a = g + r is formed and searched on the support alone: the touched columns
/// and the indices where r is nonzero (ResidualSupport, an index leaving it once its residual
/// is exactly zero). Its k largest are the k largest of all d entries (the others are zero),
/// found by nth_element on the support's keys; when fewer than k are nonzero the rest are
/// zeros taken in index order, as the scan of all d takes them. So the selection, the residual
/// and the sum are the dense path's, bit for bit, at O(support + k log k) a step. Once the
/// support outgrows d / kSupportShare the selection scans all d for the rest of the run (with
/// fp64 residuals an index sent keeps its rounding error, so the support only grows).
template <class T>
struct ResidualTopK {
  Vector<T> residual, accumulated;
  TopKSelector<T> selector;
  Staged<IndexValue> selection;

  /// The support's largest share of d (a bound on the support path's gathers, not tuned).
  static constexpr std::size_t kSupportShare = 16;

  ResidualTopK(std::size_t d, double density)
      : residual("residual", d),
        accumulated("accumulated", d),
        selector(d),
        selection("selection", top_k_count(d, density)) {
    if constexpr (kHostMemory) support_ = ResidualSupport(d);
  }
  std::size_t k() const { return selection.size(); }

  /// The next select's touched entries of `local` (Compressor::set_touched).
  void set_touched(const std::int32_t* index, std::int64_t count) {
    touched_ = index;
    touched_count_ = count;
    told_ = true;
  }
  /// After a restore the residual's support is found again (one scan) at the next select.
  void state_restored() {
    if (tracking_ == Tracking::tracked) tracking_ = Tracking::rebuild;
  }
  /// Selections made on the support (for tests).
  std::int64_t support_selections() const { return support_selections_; }

  /// a = local + r and its top-k by the selection's `form`, sorted by index, on the host (r = a
  /// until keep_unsent, which must follow). The host form selects on the support when it can.
  const IndexValue* select(const Vector<T>& local, Form form) {
    const bool told = told_;
    told_ = false;  // the list holds for this select only
    if constexpr (kHostMemory) {
      if (form == Form::host && told && use_support(touched_, touched_count_)) {
        select_on_support(local);
        ++support_selections_;
        return selection.host.data();
      }
    }
    // Without a list local may be nonzero anywhere, and so may r after this step; the device
    // form does not keep the support either.
    if (!told || form != Form::host) tracking_ = Tracking::off;
    add_residual(local, residual, accumulated);
    selector.select(accumulated, selection.device, form);
    return selection.to_host();
  }
  /// r = a minus the entries of `sent` (device pairs).
  template <class PairView>
  void keep_unsent(const PairView& sent) {
    compress::keep_unsent(accumulated, sent, residual);
  }

 private:
  enum class Tracking { tracked, rebuild, off };
  Tracking tracking_ = Tracking::tracked;  // r = 0 and a = 0 to begin with: an empty support
  ResidualSupport support_;
  const std::int32_t* touched_ = nullptr;
  std::int64_t touched_count_ = 0;
  bool told_ = false;  // set_touched was called for the next select
  std::int64_t support_selections_ = 0;
  std::vector<std::uint32_t> keys_, order_;
  std::vector<std::int32_t> ties_;
  std::vector<IndexValue> taken_;

  /// Brings the support up to date with this step's touched entries; false when the step
  /// must scan all d instead.
  bool use_support(const std::int32_t* touched, std::int64_t count) {
    const std::size_t d = residual.extent(0);
    T* const r = residual.data();
    T* const a = accumulated.data();
    if (tracking_ == Tracking::off) return false;
    if (tracking_ == Tracking::rebuild) {  // r as restored; a to +0 off the support
      support_.clear();
      for (std::size_t i = 0; i < d; ++i) {
        if (r[i] != T(0))
          support_.add(std::int32_t(i));
        else
          r[i] = a[i] = T(0);
      }
      tracking_ = Tracking::tracked;
    }
    // An index whose residual is zero (sent whole) leaves, its a and r set to +0 as the dense
    // path's a = g + r would leave them where g is 0.
    support_.keep_if([&](std::int32_t i) {
      if (r[i] != T(0)) return true;
      r[i] = a[i] = T(0);
      return false;
    });
    for (std::int64_t j = 0; j < count; ++j) support_.add(touched[j]);
    if (support_.indices().size() > d / kSupportShare) {
      tracking_ = Tracking::off;
      return false;
    }
    return true;
  }

  /// select's work on the support: a = g + r there, then the dense selection's entries.
  void select_on_support(const Vector<T>& local) {
    const T* const g = local.data();
    T* const r = residual.data();
    T* const a = accumulated.data();
    const std::vector<std::int32_t>& s = support_.indices();
    const std::size_t k = this->k();
    keys_.resize(s.size());
    std::size_t positive = 0;
    for (std::size_t j = 0; j < s.size(); ++j) {
      const std::int32_t i = s[j];
      r[i] = a[i] = g[i] + r[i];
      keys_[j] = magnitude_key(a[i]);
      positive += keys_[j] > 0;
    }
    // K: the k-th largest key of all d (the entries off the support are zeros).
    std::uint32_t K = 0;
    if (positive >= k) {
      order_ = keys_;
      std::nth_element(order_.begin(), order_.begin() + std::ptrdiff_t(k) - 1, order_.end(),
                       std::greater<std::uint32_t>());
      K = order_[k - 1];
    }
    taken_.clear();
    ties_.clear();
    for (std::size_t j = 0; j < s.size(); ++j) {
      if (keys_[j] > K) taken_.push_back(IndexValue{s[j], float(a[s[j]])});
      if (keys_[j] == K && K > 0) ties_.push_back(s[j]);
    }
    std::size_t need = k - taken_.size();
    if (K > 0) {  // ties to the smaller index
      std::sort(ties_.begin(), ties_.end());
      for (std::size_t t = 0; t < need; ++t)
        taken_.push_back(IndexValue{ties_[t], float(a[ties_[t]])});
    } else {  // zeros (on or off the support) in index order
      for (std::int32_t i = 0; need > 0; ++i) {
        if (support_.contains(i) && magnitude_key(a[i]) > 0) continue;
        taken_.push_back(IndexValue{i, float(a[i])});
        --need;
      }
    }
    std::sort(taken_.begin(), taken_.end(),
              [](const IndexValue& x, const IndexValue& y) { return x.index < y.index; });
    std::copy(taken_.begin(), taken_.end(), selection.host.data());
    selection.to_device();
  }
};

}  // namespace minisgd::compress
