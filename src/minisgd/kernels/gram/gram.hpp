#pragma once
// The Gram products of one CA-SGD outer step (docs/design.md): for the s·b rows of the stacked
// batches Y = [Y_0; …; Y_{s−1}] (b rows each), only the strictly block-lower blocks
// Y_j Y_iᵀ (i < j) are ever used. They are stored packed by block row: block row j
// (1 ≤ j < s) is the b × jb matrix Y_j [Y_0 … Y_{j−1}]ᵀ, row-major, at offset b²·j(j−1)/2,
// b²·s(s−1)/2 numbers in all — the layout that goes on the wire. Library paths compute
// exactly the needed products: one GEMM per block row, or (blas on the host) the block-lower
// part split recursively into rectangles of several block rows.
//
// Four paths, chosen per call by BlockLowerGram:
//   blas          same-precision fp32/fp64 through KokkosBlas::gemm (host BLAS, cuBLAS on
//                 GPUs);
//   dnnl          bf16 inputs with fp32 accumulation through oneDNN's matmul on CPUs with
//                 AVX512-BF16 (built with oneDNN; checked at run time);
//   widened-blas  inputs narrower than the accumulator (bf16/fp16 → fp32 or fp64, fp32 →
//                 fp64) widened once into a buffer, then the blas path: a product of two such
//                 inputs is exact in the accumulator, so this sums what team sums, in the
//                 library's order and at its rate;
//   team          a portable Kokkos team kernel tiled through scratch memory, one template on
//                 (input type, accumulator type), every entry summed over the columns in order
//                 for any thread count; it also emulates narrower accumulation formats by
//                 rounding after every addition. precision.gram_engine: portable takes it for
//                 every Gram. Its exact sums on host backends: each tile summed by the
//                 active vector tier (kernels/host/gram_tiles.hpp), in the same order.
// and, in CUDA builds with cuBLAS, tried first (precision.gram_engine: auto | cublas):
//   cublas  cublas_kokkos.hpp: bf16/fp16 inputs with fp32 accumulation on Tensor Cores, fp32
//           (TF32 with precision.tf32), fp64; the whole Gram in one GEMM up to
//           kWholeGramRows rows (launches are the cost), one per block row beyond (docs/gpu.md).
#include <cstdint>
#include <memory>
#include <string>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/vocabulary.hpp"
#include "minisgd/precision/rounder.hpp"

namespace minisgd {

/// Numbers in the packed strictly block-lower Gram of s blocks of b rows.
constexpr std::int64_t gram_packed_size(std::int64_t s, std::int64_t b) {
  return b * b * s * (s - 1) / 2;
}
/// Offset of block row j in the packed Gram.
KOKKOS_INLINE_FUNCTION constexpr std::int64_t gram_row_offset(std::int64_t j, std::int64_t b) {
  return b * b * j * (j - 1) / 2;
}
/// Multiply-adds of the packed Gram of s blocks of b rows over n columns (flops = 2·this).
constexpr double gram_multiply_adds(std::int64_t s, std::int64_t b, std::int64_t n) {
  return double(gram_packed_size(s, b)) * double(n);
}

/// The path that formed a Gram; `sparse`: a sparse share's rows merged pair by pair
/// (kernels/ca_sgd_sparse_kernels.hpp), the others dense (BlockLowerGram).
enum class GramPath { none, blas, dnnl, widened_blas, team, cublas, sparse };
const char* name(GramPath p);
/// Up to this many rows (s·b, s > 2) `p` forms the packed Gram in one library call, the whole
/// Y·Yᵀ then packed; beyond, one call per block row (s − 1). 0: always per block row.
std::int64_t whole_gram_rows(GramPath p);

/// The portable team kernel: packed(...) = Σ_k Acc(Y(r,k))·Acc(Y(c,k)), accumulated in Acc,
/// rounded by `accumulate` after every addition unless it is the identity (the kernel is
/// instantiated for the typed rounding, precision::with_nearest_rounding). Compiled for
/// In ∈ {double, float, bf16, fp16} and Acc ∈ {double, float}.
template <class In, class Acc>
void gram_team(const Matrix<In>& Y, std::int64_t b, const Vector<Acc>& packed,
               const precision::Rounder& accumulate);

/// Same-precision path through KokkosBlas::gemm (T = float, double): on the host one GEMM
/// for block rows [s/2, s) × block columns [0, s/2), then both triangles the same way (each
/// entry one library dot product over the n columns); on a device one GEMM per block row.
template <class T>
void gram_blas(const Matrix<T>& Y, std::int64_t b, const Vector<T>& packed);

class DnnlGram;

/// Gives the host BLAS library (OpenBLAS, oneMKL) the threads Kokkos has, once, unless
/// OPENBLAS_NUM_THREADS or MKL_NUM_THREADS says otherwise: left to itself OpenBLAS starts a
/// thread per core in every MPI rank, and ranks that share a node oversubscribe it, each Gram
/// then slower than on one thread. BlockLowerGram's
/// constructor calls it on host backends, as oneDNN is given the same count.
void match_blas_threads();

/// Chooses the fastest path that computes what was asked and keeps the state the library
/// paths cache between calls (oneDNN primitives per block-row shape).
class BlockLowerGram {
 public:
  BlockLowerGram();
  ~BlockLowerGram();
  BlockLowerGram(const BlockLowerGram&) = delete;
  BlockLowerGram& operator=(const BlockLowerGram&) = delete;

  /// Computes the packed Gram of Y (rows a multiple of b); returns the path taken.
  template <class In, class Acc>
  GramPath compute(const Matrix<In>& Y, std::int64_t b, const Vector<Acc>& packed,
                   const precision::Rounder& accumulate);

  /// True when bf16 inputs go through oneDNN (built with it and the CPU has AVX512-BF16).
  bool dnnl_available() const { return dnnl_ != nullptr; }
  /// oneDNN's implementation name for the bf16 matmul, e.g. "brg:avx512_core_bf16".
  std::string dnnl_implementation() const;
  /// Why bf16 inputs cannot go through oneDNN here ("" when they can).
  std::string dnnl_unavailable_reason() const;
  /// precision.gram_engine and precision.tf32: automatic takes cuBLAS wherever it computes
  /// what was asked (CUDA builds with cuBLAS), then the host libraries; portable always the
  /// fixed-order team kernel (the same bits for any thread count); cublas insists on cuBLAS
  /// (an input error when it cannot).
  void set_engine(GramEngine engine, bool tf32) {
    engine_ = engine;
    tf32_ = tf32;
  }

 private:
  /// Y widened to Acc for the widened-blas path (grown as needed, kept between calls).
  template <class In, class Acc>
  Matrix<Acc> widened(const Matrix<In>& Y);

  std::unique_ptr<DnnlGram> dnnl_;
  Matrix<float> wide_fp32_;
  Matrix<double> wide_fp64_;
  GramEngine engine_ = GramEngine::automatic;
  bool tf32_ = false;
};

}  // namespace minisgd
