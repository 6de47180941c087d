#pragma once
// The kernels of one mini-batch SGD step on the batch of b rows starting at local row
// `first` (rows of the row-major local matrix, so a batch is one contiguous block):
// margins z = X_B w, derivatives u = ℓ'(z; y) and the gradient product g = X_Bᵀ u.
// X is stored as S (double, float, bf16, fp16); every sum, z, u, g and w are in A.
// The loss is a template parameter: kernels are compiled per loss (with_loss dispatches
// once per step), nothing switches on it per element.
//
// Fixed reduction order, so the bits do not depend on the thread count, the path taken or the
// host's vector tier: a margin is summed in kMarginPartialSums interleaved partial sums added
// in a fixed tree (row_dot.hpp); a gradient entry is the sum, chunk after chunk, of the
// batch's chunks of kChunkRows rows, each chunk's rows summed in row order from zero
// (kernels/tuning.hpp).
//
// Host backends, at most one launch: each chunk (in L1/L2) is read from memory once by its
// margins, its derivatives are one loop over its rows, its share of the gradient rereads it
// from cache a block of columns at a time with the block's sums in registers. Threads take
// whole chunks; with several, each chunk's share goes to a buffer and the shares are added in
// chunk order after the launch (kernels/host/chunk_sums.hpp). On the calling thread the loops
// take the whole step (kernels/host/row_loops.hpp, sgd_grouped), rows of a few hundred bytes
// having the margins of a group of chunks summed in one pass before the chunks' gradients:
// the same additions in the same order. The loops are those of the CPU's widest vector tier
// (core/simd/tier.hpp).
// Devices: a warp per short row, a team per long one for the margins; for the gradient a team
// per 32 columns, its warps summing consecutive chunks at once and the team adding their sums
// in chunk order (kernels/device/row_kernels.hpp): the host's order, so the same bits.
#include <cstdint>
#include <type_traits>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/launch.hpp"
#include "minisgd/core/profiling.hpp"
#include "minisgd/core/simd/tier.hpp"
#include "minisgd/kernels/device/row_kernels.hpp"
#include "minisgd/kernels/host/chunk_sums.hpp"
#include "minisgd/kernels/host/host_kernels.hpp"
#include "minisgd/kernels/tuning.hpp"
#include "minisgd/models/loss.hpp"

namespace minisgd {

/// z(i) = x_{first+i}·w for the batch (the column decomposition's partial margins).
template <class S, class A>
void sgd_margins(const Matrix<S>& X, std::int64_t first, const Vector<A>& w, const Vector<A>& z) {
  [[maybe_unused]] const int n = int(X.extent(1));  // (named before the constexpr-if: nvcc)
  const std::int64_t b = z.extent(0);
  if constexpr (kHostMemory) {
    const auto margins = host::row_kernels<S, A>(simd::active_tier()).margins;
    const S* const x = X.data() + first * n;
    for_each_index("minisgd::sgd_margins", (b + kChunkRows - 1) / kChunkRows,
                   b * n * std::int64_t(sizeof(S)), [=](const std::int64_t chunk) {
                     const std::int64_t r0 = chunk * kChunkRows;
                     margins(x + r0 * n, n, w.data(), n, kmin(kChunkRows, b - r0), z.data() + r0);
                   });
  } else {
    device::device_row_dots("minisgd::sgd_margins", X, device::OneBatch{first}, b, b, w, z);
  }
}

/// g = Σ_i ℓ'(z_i; y_i)·x_i over the batch of z.extent(0) rows starting at `first`. The
/// margins z are computed here (row decomposition) unless `margins_given` (column
/// decomposition: z already holds the summed margins). u receives the derivatives on host
/// backends. Launches: on host backends 1 for a batch of at least kCallingThreadBytes on
/// several threads, else none (the calling thread); on devices 2 (margins, gradient).
template <Loss L, class S, class A>
void sgd_gradient(const Matrix<S>& X, std::int64_t first, const Vector<double>& y,
                  const Vector<A>& w, const Vector<A>& z, bool margins_given, const Vector<A>& u,
                  const Vector<A>& g) {
  if constexpr (kHostMemory) {
    const auto& loops = host::step_kernels<L, S, A>(simd::active_tier());
    const int n = int(X.extent(1));
    const std::int64_t b = z.extent(0), chunks = (b + kChunkRows - 1) / kChunkRows;
    const std::int64_t bytes = b * n * std::int64_t(sizeof(S));
    const host::SgdBatch<S, A> batch{
        X.data() + first * n, y.data() + first, w.data(), z.data(), u.data(), b, n, margins_given};
    if (loops.grouped && !margins_given && chunks > 1 && on_calling_thread(bytes)) {
      Region region("minisgd::sgd_fused_step");  // (its name copied only when a tool listens)
      loops.grouped(batch, g.data());
      return;
    }
    host::sum_of_chunk_groups<1>(
        "minisgd::sgd_fused_step", chunks, bytes, n, g.data(),
        [&](const std::int64_t k, int, A* const p, std::int64_t, auto into_g) {
          if constexpr (decltype(into_g)::value)
            loops.chunk_into_g(batch, k, p);
          else
            loops.chunk_stored(batch, k, p);
        });
  } else {
    if (!margins_given) sgd_margins(X, first, w, z);
    device::device_chunk_sums("minisgd::sgd_gradient", X, device::OneBatch{first}, z.extent(0), 1,
                              device::Derivatives<L, A>{z, y, first}, g);
  }
}

}  // namespace minisgd
