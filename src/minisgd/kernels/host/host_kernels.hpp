#pragma once
// The host loops of every kernel, as tables of function pointers, one table per tier
// (core/simd/tier.hpp): the loops are written once (kernels/host/row_loops.hpp), compiled
// once per tier in its own translation unit (kernels/host/tier_*.cpp), and the entry points
// (kernels/sgd_kernels.hpp, kernels/ca_sgd_kernels.hpp, kernels/gather.hpp,
// kernels/objective.hpp) look up the active tier's table once per call. Kokkos stays on this
// side: the launches, the per-thread buffers and the order in which the chunks' shares are
// added (kernels/host/chunk_sums.hpp); the tables hold what runs inside a work item.
#include <cstdint>

#include "minisgd/core/simd/tier.hpp"
#include "minisgd/core/vocabulary.hpp"
#include "minisgd/precision/storage_types.hpp"

namespace minisgd::host {

/// An SGD step's batch of b rows of n values, as the host loops read it.
template <class S, class A>
struct SgdBatch {
  const S* x;       // the batch's first row; rows n apart
  const double* y;  // the batch's labels
  const A* w;       // the weights
  A* z;             // the margins: computed, or given when margins_given
  A* u;             // the loss derivatives (computed)
  std::int64_t b;
  int n;
  bool margins_given;  // (column decomposition: z holds the summed margins)
};

/// The batches of a CA-SGD outer step, as the host loops of its gradient read them.
template <class S, class A>
struct CaBatches {
  const S* x;                 // X's first row
  std::int64_t stride;        // values between rows of X
  const std::int64_t* first;  // the first row of each batch
  const A* v;                 // the rows' weights, batch after batch
  std::int64_t b;             // rows of a batch
  int n;
};

/// The loops over rows that do not depend on the loss, for storage S and arithmetic A.
template <class S, class A>
struct RowKernels {
  /// z[i] = row_dot(x_i, w, n) for `rows` rows `stride` values apart (SGD's margin order).
  void (*margins)(const S* x, std::int64_t stride, const A* w, int n, std::int64_t rows, A* z);
  /// p[c] = Σ_{i < rows} x_i[c]·u_i from zero in row order, for c < n: a chunk's share of a
  /// gradient, a block of columns at a time with the block's sums in registers.
  void (*chunk_sum)(const S* x, std::int64_t stride, int n, const A* u, std::int64_t rows, A* p);
  /// CA-SGD's gradient: the shares of `count` ≤ 2 chunks from chunk k0 (counted batch after
  /// batch), added into g in order (into_g), or stored from zero, chunk k0 + j's at
  /// p + j·pitch (stored).
  void (*ca_shares_into_g)(const CaBatches<S, A>& batches, std::int64_t k0, int count, A* g,
                           std::int64_t pitch);
  void (*ca_shares_stored)(const CaBatches<S, A>& batches, std::int64_t k0, int count, A* p,
                           std::int64_t pitch);
};

/// The loops of an SGD step with loss L.
template <Loss L, class S, class A>
struct StepKernels {
  /// Chunk k of the batch (kChunkRows rows from row k·kChunkRows): its margins (unless given)
  /// and derivatives, then its share of the gradient, added into g (into_g) or stored in p.
  void (*chunk_into_g)(const SgdBatch<S, A>& batch, std::int64_t k, A* g);
  void (*chunk_stored)(const SgdBatch<S, A>& batch, std::int64_t k, A* p);
  /// The whole step on the calling thread, g = the chunks' shares added in order, the margins
  /// of a group of chunks (margins_group) summed in one pass first; nullptr where the tier
  /// widens S into a buffer (the chunks then go one by one).
  void (*grouped)(const SgdBatch<S, A>& batch, A* g);
};

/// y[c] = precision::convert<In>(x[c]) for c < n.
template <class S, class In>
using CastKernel = void (*)(const S* x, In* y, std::int64_t n);

/// z[i] ← ℓ(z[i]; y[i]) for i < n, the objective's loss terms.
using LossValuesKernel = void (*)(double* z, const double* y, std::int64_t n);

/// One output tile of the portable Gram's exact sums (kernels/gram/gram.cpp): out[i·out_stride
/// + c] = Σ_{k < n} a_i[k]·b_c[k] for i < rows, c < cols (each ≤ kGramTile), rows a_i = a +
/// i·stride and b_c = b + c·stride of In widened to Acc, each sum from zero in k order.
template <class In, class Acc>
using GramTileKernel = void (*)(const In* a, const In* b, std::int64_t stride, std::int64_t n,
                                int rows, int cols, Acc* out, std::int64_t out_stride);

// The tables of tier t (kernels/host/dispatch.cpp); t must be compiled in.
template <class S, class A>
const RowKernels<S, A>& row_kernels(simd::Tier t);
template <Loss L, class S, class A>
const StepKernels<L, S, A>& step_kernels(simd::Tier t);
template <class S, class In>
CastKernel<S, In> cast_kernel(simd::Tier t);
template <Loss L>
LossValuesKernel loss_values_kernel(simd::Tier t);
template <class In, class Acc>
GramTileKernel<In, Acc> gram_tile_kernel(simd::Tier t);

// One tier's tables, Isa being simd::Generic, simd::Avx2 or simd::Avx512: defined in
// kernels/host/row_loops.hpp, instantiated in that tier's translation unit only.
template <class Isa, class S, class A>
const RowKernels<S, A>& tier_row_kernels();
template <class Isa, Loss L, class S, class A>
const StepKernels<L, S, A>& tier_step_kernels();
template <class Isa, class S, class In>
CastKernel<S, In> tier_cast_kernel();
template <class Isa, Loss L>
LossValuesKernel tier_loss_values_kernel();
// (kernels/host/gram_tiles.hpp)
template <class Isa, class In, class Acc>
GramTileKernel<In, Acc> tier_gram_tile_kernel();

// The types the tables exist for: M(S, A) for storage S and arithmetic A (SGD's and CA-SGD's
// steppers, the objective's FP64 margins; as (In, Acc), every pair the Gram has), M(S, In) for a
// gather into In.
#define MINISGD_HOST_STEP_TYPES(M, ...)   \
  M(__VA_ARGS__, double, double)          \
  M(__VA_ARGS__, float, float)            \
  M(__VA_ARGS__, precision::bf16, float)  \
  M(__VA_ARGS__, precision::fp16, float)  \
  M(__VA_ARGS__, float, double)           \
  M(__VA_ARGS__, precision::bf16, double) \
  M(__VA_ARGS__, precision::fp16, double)
#define MINISGD_HOST_ROW_TYPES(M, ...) \
  MINISGD_HOST_STEP_TYPES(M, __VA_ARGS__) M(__VA_ARGS__, double, float)
#define MINISGD_HOST_CAST_TYPES_FROM(M, X, S) \
  M(X, S, double) M(X, S, float) M(X, S, precision::bf16) M(X, S, precision::fp16)
#define MINISGD_HOST_CAST_TYPES(M, X)                 \
  MINISGD_HOST_CAST_TYPES_FROM(M, X, double)          \
  MINISGD_HOST_CAST_TYPES_FROM(M, X, float)           \
  MINISGD_HOST_CAST_TYPES_FROM(M, X, precision::bf16) \
  MINISGD_HOST_CAST_TYPES_FROM(M, X, precision::fp16)
#define MINISGD_HOST_LOSSES(M, X) M(X, Loss::logistic) M(X, Loss::linear) M(X, Loss::poisson)

}  // namespace minisgd::host
