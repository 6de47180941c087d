#pragma once
// The kernels of one SGD step on a sparse share (data.layout: sparse): margins z = X_B w,
// derivatives u = ℓ'(z; y) and the gradient product g = X_Bᵀ u over the batch of b rows at
// local row `first`, X in CSR stored as S, every sum in A.
//
// A margin adds a row's products into kLanes partial sums by column (column j into sum
// j mod kLanes) and adds those in the dense kernels' fixed tree: a zero of a dense row adds
// nothing, so the sparse and the dense margins of the same row are the same sums. The
// gradient is the batch's products added in row order: on host backends by the calling
// thread (a batch's nonzeros are few), on devices with atomic additions (the order is then
// the device's).
#include <cstdint>
#include <vector>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/data/dataset.hpp"
#include "minisgd/kernels/tuning.hpp"
#include "minisgd/models/loss.hpp"
#include "minisgd/precision/storage_types.hpp"

namespace minisgd {

/// x_i·w for the CSR row i: kLanes partial sums by column, then the dense kernels' tree.
template <class A, class S, class W>
KOKKOS_INLINE_FUNCTION A csr_row_dot(const SparseRows<S>& X, std::int64_t i, const W& w) {
  constexpr int kLanes = kMarginPartialSums;
  A part[kLanes] = {};
  for (std::int64_t k = X.row_map(i); k < X.row_map(i + 1); ++k) {
    const std::int32_t j = X.entries(k);
    part[std::uint32_t(j) % kLanes] += precision::convert<A>(X.values(k)) * A(w(j));
  }
  for (int half = kLanes / 2; half > 0; half /= 2)
    for (int l = 0; l < half; ++l) part[l] += part[l + half];
  return part[0];
}

/// z(i) = x_{first+i}·w for the batch (the column decomposition's partial margins).
template <class S, class W, class Z>
void csr_margins(const SparseRows<S>& X, std::int64_t first, const W& w, const Z& z) {
  using A = typename Z::non_const_value_type;
  Kokkos::parallel_for(
      "minisgd::csr_margins", Kokkos::RangePolicy<ExecSpace>(0, z.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i) { z(i) = csr_row_dot<A>(X, first + i, w); });
}

/// g = X_Bᵀ u with u(i) = ℓ'(z(i); y(first + i)); z holds the margins when margins_given.
/// Zeroes every entry of g first (the AllReduce and the optimizers read the whole vector)
/// unless the caller says g is zero already (`zeroed`: it zeroed the previous batch's columns).
template <Loss L, class S, class A>
void csr_gradient(const SparseRows<S>& X, std::int64_t first, const Vector<double>& y,
                  const Vector<A>& w, const Vector<A>& z, bool margins_given, const Vector<A>& u,
                  const Vector<A>& g, bool zeroed = false) {
  if (!margins_given) csr_margins(X, first, w, z);
  const std::int64_t b = z.extent(0);
  if (!zeroed) Kokkos::deep_copy(g, A(0));
  if constexpr (kHostMemory) {
    for (std::int64_t i = 0; i < b; ++i) {
      const A ui = loss_derivative<L>(z(i), A(y(first + i)));
      u(i) = ui;
      for (std::int64_t k = X.row_map(first + i); k < X.row_map(first + i + 1); ++k)
        g(X.entries(k)) += precision::convert<A>(X.values(k)) * ui;
    }
  } else {
    Kokkos::parallel_for(
        "minisgd::csr_gradient", Kokkos::RangePolicy<ExecSpace>(0, b),
        KOKKOS_LAMBDA(const std::int64_t i) {
          const A ui = loss_derivative<L>(z(i), A(y(first + i)));
          u(i) = ui;
          for (std::int64_t k = X.row_map(first + i); k < X.row_map(first + i + 1); ++k)
            Kokkos::atomic_add(&g(X.entries(k)), precision::convert<A>(X.values(k)) * ui);
        });
  }
}

/// Host backends: the distinct columns of a batch's CSR rows, in the order they first occur,
/// found with one bit per column (cleared again after): O(nonzeros of the batch), not O(d).
/// A sparse step zeroes its gradient on the last batch's columns alone and hands the list to
/// the gradient compressor (compress/compressor.hpp, set_touched).
class TouchedColumns {
 public:
  TouchedColumns() = default;
  explicit TouchedColumns(std::int64_t d) : bits_(std::size_t(d + 63) / 64, 0) {}

  /// The columns of rows [first, first + rows) of X.
  template <class S>
  void collect(const SparseRows<S>& X, std::int64_t first, std::int64_t rows) {
    static_assert(kHostMemory && sizeof(S) > 0, "host backends only");
    list_.clear();
    const std::int32_t* const col = X.entries.data();
    for (std::int64_t k = X.row_map(first); k < X.row_map(first + rows); ++k) {
      const auto c = std::uint32_t(col[k]);
      std::uint64_t& word = bits_[c / 64];
      const std::uint64_t bit = std::uint64_t(1) << (c % 64);
      if (!(word & bit)) {
        word |= bit;
        list_.push_back(std::int32_t(c));
      }
    }
    for (const std::int32_t c : list_) bits_[std::uint32_t(c) / 64] = 0;
  }
  void clear() { list_.clear(); }
  const std::vector<std::int32_t>& columns() const { return list_; }

 private:
  std::vector<std::uint64_t> bits_;
  std::vector<std::int32_t> list_;
};

/// Host backends: the lazily scaled step's margins z(i) = scale·(x_{first+i}·v), with the
/// weights kSparsePrefetchValues values ahead asked of memory early (for writing: the update
/// follows): on rows of millions of columns most are cache misses, and this way they overlap.
/// A row's products go into four sums by position, not csr_row_dot's sixteen by column (a sum
/// picked by the column is a chain through memory): the margins differ from the dense step's
/// by rounding, as the lazily applied update does already.
template <class S, class A>
void csr_margins_prefetched(const SparseRows<S>& X, std::int64_t first, const Vector<A>& v, A scale,
                            const Vector<A>& z) {
  static_assert(kHostMemory && sizeof(S) > 0,
                "host backends only");  // dependent: fails only where used
  constexpr std::int64_t kAhead = kSparsePrefetchValues;
  const std::int32_t* const col = X.entries.data();
  const S* const val = X.values.data();
  const A* const w = v.data();
  const std::int64_t end = X.row_map(first + std::int64_t(z.extent(0)));
  const auto product = [&](std::int64_t k) { return precision::convert<A>(val[k]) * w[col[k]]; };
  for (std::int64_t i = 0; i < std::int64_t(z.extent(0)); ++i) {
    const std::int64_t k1 = X.row_map(first + i + 1);
    std::int64_t k = X.row_map(first + i);
    A s0 = A(0), s1 = A(0), s2 = A(0), s3 = A(0);
    for (; k + 4 <= k1; k += 4) {
      if (k + kAhead + 4 <= end)
        for (int j = 0; j < 4; ++j) __builtin_prefetch(w + col[k + kAhead + j], 1);
      s0 += product(k);
      s1 += product(k + 1);
      s2 += product(k + 2);
      s3 += product(k + 3);
    }
    for (; k < k1; ++k) {
      if (k + kAhead < end) __builtin_prefetch(w + col[k + kAhead], 1);
      s0 += product(k);
    }
    z(i) = ((s0 + s1) + (s2 + s3)) * scale;
  }
}

/// Host backends: the batch's derivatives u from the margins z, and v(j) −= step·x_ij·u_i for
/// each of its values in row order: the gradient applied as it is formed, with no gradient
/// vector (the lines of v were just read by the margins). A column that occurs in several rows
/// of the batch takes its terms one at a time rather than summed first, so the weights agree
/// with the summed update to rounding, not bit for bit.
template <Loss L, class S, class A>
void csr_direct_update(const SparseRows<S>& X, std::int64_t first, const Vector<double>& y,
                       const Vector<A>& z, const Vector<A>& u, const Vector<A>& v, A step) {
  static_assert(kHostMemory && sizeof(S) > 0,
                "host backends only");  // dependent: fails only where used
  const std::int32_t* const col = X.entries.data();
  const S* const val = X.values.data();
  A* const w = v.data();
  for (std::int64_t i = 0; i < std::int64_t(z.extent(0)); ++i) {
    const A ui = loss_derivative<L>(z(i), A(y(first + i)));
    u(i) = ui;
    const A s = step * ui;
    for (std::int64_t k = X.row_map(first + i); k < X.row_map(first + i + 1); ++k)
      w[col[k]] -= s * precision::convert<A>(val[k]);
  }
}

}  // namespace minisgd
