#pragma once
// The portable Gram's output tiles on the host (kernels/gram/gram.cpp, exact sums), written once
// against the vector type and compiled once per tier as kernels/host/row_loops.hpp is: each
// entry C(i, c) = Σ_k a_i[k]·b_c[k] from zero over k in order, every product rounded and then
// added (the tiers are compiled with -ffp-contract=off), the team kernel's sums and so its bits
// on every tier (tests/kernels/test_sgd_host_rows.cpp). As in the team kernel, a k-block of the
// tile's columns is staged transposed and widened to Acc, so a vector holds adjacent columns;
// a block of rows × columns of C then stays in registers across the k-block, where the team
// kernel's loop reloads and stores C for every k.
#include <cstdint>
#include <type_traits>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/simd/vector.hpp"
#include "minisgd/kernels/host/host_kernels.hpp"
#include "minisgd/kernels/tuning.hpp"
#include "minisgd/precision/storage_types.hpp"

#ifndef MINISGD_SIMD_TARGET_OPEN
#error "kernels/host/gram_tiles.hpp: for a tier's translation unit, after target_begin.hpp"
#endif

namespace minisgd::host {

/// The shape of a block of a Gram tile in registers, for vectors V of tier Isa: kRows rows of
/// kVecs vectors (of the kTileVecs across a tile's row), gram_sum_registers registers in all
/// (a generic vector of four doubles is two SSE registers).
template <class Isa, class V>
struct GramBlock {
  static constexpr int kTileVecs = kGramTile / V::lanes;
  static constexpr int kVecs = kTileVecs < 4 ? kTileVecs : 4;
  static constexpr int kPieces = int(sizeof(V)) > register_bytes(Isa::tier)
                                     ? int(sizeof(V)) / register_bytes(Isa::tier)
                                     : 1;
  static constexpr int kRows = gram_sum_registers(Isa::tier) / (kVecs * kPieces);
  static_assert(kGramTile % V::lanes == 0 && kTileVecs % kVecs == 0 && kRows >= 1,
                "a tile's row is whole blocks of whole vectors");
};

/// C's R rows × kVecs vectors from c (rows kGramTile apart) += a_r[k]·Bt(k, ·) over k < kk in
/// order: a_r = a + r·a_stride, Bt's rows kGramTile apart from bt.
template <int R, int kVecs, class V>
MINISGD_SIMD_INLINE void gram_block(const typename V::value_type* a, std::int64_t a_stride,
                                    const typename V::value_type* bt, int kk,
                                    typename V::value_type* c) {
  constexpr int W = V::lanes;
  V acc[R][kVecs];
  for (int r = 0; r < R; ++r)
    for (int q = 0; q < kVecs; ++q) acc[r][q] = V::load(c + r * kGramTile + q * W);
  for (int k = 0; k < kk; ++k) {
    V b[kVecs];
    for (int q = 0; q < kVecs; ++q) b[q] = V::load(bt + k * kGramTile + q * W);
    for (int r = 0; r < R; ++r) {
      const V ar = V::broadcast(a[r * a_stride + k]);
      for (int q = 0; q < kVecs; ++q) acc[r][q] = acc[r][q] + ar * b[q];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int q = 0; q < kVecs; ++q) acc[r][q].store(c + r * kGramTile + q * W);
}

/// R rows of C, every block of columns of the tile (the columns past the tile's are zeros of
/// Bt, summed and never stored).
template <int R, class Isa, class V>
MINISGD_SIMD_INLINE void gram_rows(const typename V::value_type* a, std::int64_t a_stride,
                                   const typename V::value_type* bt, int kk,
                                   typename V::value_type* c) {
  using Block = GramBlock<Isa, V>;
  for (int q0 = 0; q0 < Block::kTileVecs; q0 += Block::kVecs)
    gram_block<R, Block::kVecs, V>(a, a_stride, bt + q0 * V::lanes, kk, c + q0 * V::lanes);
}

/// host::GramTileKernel.
template <class Isa, class In, class Acc>
void gram_tile(const In* a, const In* b, std::int64_t stride, std::int64_t n, int rows, int cols,
               Acc* out, std::int64_t out_stride) {
  using V = simd::Vec<Isa, Acc>;
  constexpr int T = kGramTile, D = kGramDepth, R = GramBlock<Isa, V>::kRows;
  alignas(64) Acc C[T * T];   // the sums
  alignas(64) Acc Bt[D * T];  // a k-block of the columns' rows, transposed
  alignas(64) Acc A[T * D];   // a k-block of the rows, widened (In ≠ Acc)
  for (int e = 0; e < rows * T; ++e) C[e] = Acc(0);
  for (int k = 0; k < D; ++k)
    for (int c = cols; c < T; ++c) Bt[k * T + c] = Acc(0);
  for (std::int64_t k0 = 0; k0 < n; k0 += D) {
    const int kk = int(kmin<std::int64_t>(D, n - k0));
    for (int c = 0; c < cols; ++c)
      for (int k = 0; k < kk; ++k) Bt[k * T + c] = precision::convert<Acc>(b[c * stride + k0 + k]);
    const Acc* ak = A;
    std::int64_t a_stride = D;
    if constexpr (std::is_same_v<In, Acc>) {  // read in place
      ak = a + k0;
      a_stride = stride;
    } else {
      for (int i = 0; i < rows; ++i)
        for (int k = 0; k < kk; ++k) A[i * D + k] = precision::convert<Acc>(a[i * stride + k0 + k]);
    }
    int i = 0;
    for (; i + R <= rows; i += R)
      gram_rows<R, Isa, V>(ak + i * a_stride, a_stride, Bt, kk, C + i * T);
    for (; i < rows; ++i) gram_rows<1, Isa, V>(ak + i * a_stride, a_stride, Bt, kk, C + i * T);
  }
  for (int i = 0; i < rows; ++i)
    for (int c = 0; c < cols; ++c) out[i * out_stride + c] = C[i * T + c];
}

template <class Isa, class In, class Acc>
GramTileKernel<In, Acc> tier_gram_tile_kernel() {
  return &gram_tile<Isa, In, Acc>;
}

#define MINISGD_TIER_GRAM(Isa, In, Acc) \
  template GramTileKernel<In, Acc> tier_gram_tile_kernel<Isa, In, Acc>();
/// The Gram tiles of tier Isa (in its translation unit), for every (In, Acc) pair.
#define MINISGD_HOST_GRAM_TABLES(Isa) MINISGD_HOST_ROW_TYPES(MINISGD_TIER_GRAM, Isa)

}  // namespace minisgd::host
