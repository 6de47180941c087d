#pragma once
// The kernels' sizes, in one place: first the two that fix the order of the sums (changing
// them changes the bits of every result), then the sizes of work items, blocks and launches,
// which only move speed (every kernel gives the same bits for any of them).
#include <cstdint>

#include "minisgd/core/simd/tier.hpp"

namespace minisgd {

// ---- The order of the sums ---------------------------------------------------------------

/// Partial sums of a margin x·w: column c adds into sum c mod kMarginPartialSums, and the sums
/// are added in a fixed tree (row_dot.hpp). Dense, sparse, host and device margins alike.
constexpr int kMarginPartialSums = 16;

/// Rows of a gradient chunk: a gradient entry is the sum, chunk after chunk, of each chunk's
/// rows summed from zero in row order (SGD's step and CA-SGD's update, host and device).
constexpr std::int64_t kChunkRows = 32;

// ---- Host loops ----------------------------------------------------------------------------

/// Rows of at least this many values are long for the margins: their chains of additions are
/// long enough alone, and how they are read from memory matters more (RowWalk).
constexpr int kLongRowValues = 128;

/// How a tier's margins loop walks a block of rows: each row's sums in a loop of its own
/// (one_by_one), four rows' loops interleaved with each load of w serving the four
/// (four_interleaved), or four rows far apart interleaved, a quarter of the block apart
/// (four_runs: each run is a stream of its own for the prefetchers, which one core with AVX2
/// reads faster than one stream; adjacent rows interleaved are one stream, and slower there
/// than a row at a time). AVX-512 holds a row's 16 sums in one register, one chain of
/// additions: 16-bit rows, widened in registers, arrive faster than one chain adds them.
enum class RowWalk { one_by_one, four_interleaved, four_runs };
struct MarginWalk {
  RowWalk short_rows, long_rows;
};
constexpr MarginWalk margin_walk(simd::Tier t, int storage_bytes) {
  switch (t) {
    case simd::Tier::avx2: return {RowWalk::four_interleaved, RowWalk::four_runs};
    case simd::Tier::avx512:
      return {RowWalk::four_interleaved,
              storage_bytes < 4 ? RowWalk::four_interleaved : RowWalk::one_by_one};
    default: return {RowWalk::one_by_one, RowWalk::one_by_one};
  }
}

/// Vector registers of sums in a block of a chunk's gradient: enough independent chains of
/// additions to hide their latency. A block is as many columns as they hold, of the tier's
/// widest registers (gradient_block_columns).
constexpr int kGradientBlockRegisters = 8;
constexpr int register_bytes(simd::Tier t) {
  return t == simd::Tier::avx512 ? 64 : t == simd::Tier::avx2 ? 32 : 16;
}
template <class A>
constexpr int gradient_block_columns(simd::Tier t) {
  return kGradientBlockRegisters * register_bytes(t) / int(sizeof(A));
}

/// Vector registers of sums in a block of a host Gram tile (kernels/host/gram_tiles.hpp): a
/// block of rows × columns of the tile kept in registers across a k-block, half the tier's
/// register file (AVX-512 has 32, the others 16), enough chains to hide the additions' latency.
constexpr int gram_sum_registers(simd::Tier t) { return t == simd::Tier::avx512 ? 16 : 8; }

/// SGD's step on the calling thread: rows of at least kGroupedMarginsRowBytes have the margins
/// of up to kGroupedMarginsChunks chunks, at most kGroupedMarginsBytes of rows, summed in one
/// pass before each chunk's gradient rereads its rows from L2: one longer stream from memory,
/// where chunk by chunk the stream stopped after every chunk while the gradient ran from L1.
/// Shorter rows keep a chunk at a time: their step is bound by its arithmetic and its rereads
/// from L1, and at some thousands of columns a chunk is a long stream already.
constexpr std::int64_t kGroupedMarginsRowBytes = 384;
constexpr std::int64_t kGroupedMarginsBytes = 128 * 1024;
constexpr std::int64_t kGroupedMarginsChunks = 8;

/// Chunks a margins pass takes together for rows of `row_bytes`: a power of two, 1 to
/// kGroupedMarginsChunks.
constexpr std::int64_t margins_group(std::int64_t row_bytes) {
  std::int64_t group = 1;
  if (row_bytes < kGroupedMarginsRowBytes) return group;
  while (group < kGroupedMarginsChunks &&
         2 * group * kChunkRows * row_bytes <= kGroupedMarginsBytes)
    group *= 2;
  return group;
}

/// Rows of a host work item of CA-SGD's partial margins: a batch's rows are contiguous, so the
/// margins loop takes them a block at a time; enough work per item for short rows, s·b/32
/// items for the threads.
constexpr std::int64_t kMarginItemRows = 32;

/// Narrow rows (bf16, fp16 on a tier that does not widen them in registers) at least this long
/// have their margins summed straight from storage, the widening inside the loop the compiler
/// vectorizes; shorter ones are widened into a buffer first, for the loops' fixed-length tails.
constexpr int kLongNarrowRowValues = 64;
/// Values of the buffer those shorter rows are widened into, a few rows at a time: in L1.
constexpr std::int64_t kWidenedPieceValues = 2048;

/// CA-SGD's gradient: rows narrower than this have each chunk's sums kept in registers, a
/// block of columns at a time (SGD's chunk gradient; HIGGS' 28 + 1 and SUSY's 18 + 1 columns
/// are shorter than a pass over sums in memory). Wider rows are walked whole, one contiguous
/// stream from memory with the sums in L1.
constexpr int kWalkedRowValues = 48;

/// Rows ahead whose cache lines the loops over narrow rows ask for: the hardware prefetcher
/// alone leaves the loop waiting.
constexpr std::int64_t kPrefetchRowsAhead = 2;

/// Nonzeros ahead whose weights the lazily scaled sparse step asks of memory: far enough ahead
/// to cover a miss to memory at the step's pace, within one batch.
constexpr std::int64_t kSparsePrefetchValues = 64;

/// Bytes of a page of memory as the prefetchers see it: they stop at its boundaries.
constexpr std::uintptr_t kPrefetchPageBytes = 4096;

/// Rows of a host work item of the objective's margins, and values of one of its loss sums.
constexpr std::int64_t kObjectiveItemRows = 256;
constexpr std::int64_t kObjectiveLossValues = 1024;

// ---- Device kernels ------------------------------------------------------------------------

/// A warp of kDeviceLanes vector lanes reads 32 consecutive values of a row (one coalesced
/// load); a team has kDeviceWarps of them.
constexpr int kDeviceLanes = 32;
constexpr int kDeviceWarps = 8;

/// Rows at most this long get a warp each for their margins (4 values a lane); longer ones a
/// team each.
constexpr int kDeviceWarpRowValues = 4 * kDeviceLanes;

/// Columns a team owns in the device gradient whose sums are rounded after every operation
/// (an emulated narrow accumulator): one block of sums in scratch.
constexpr int kDeviceRoundedColumns = 512;

/// The portable Gram's team kernel: rows and columns of an output tile, and columns of Y staged
/// in scratch per step.
constexpr int kGramTile = 32;
constexpr int kGramDepth = 32;

/// Rows up to which the cuBLAS Gram is one GEMM of the whole Y·Yᵀ and a kernel that packs its
/// block-lower part: 2 launches instead of s − 1, at twice the flops, where blocks are small
/// and launches are the cost.
constexpr std::int64_t kWholeGramRows = 1024;

}  // namespace minisgd
