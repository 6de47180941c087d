#pragma once
// Which global rows and columns a rank holds. Rows are shuffled once with the run seed
// (position q holds original row order[q]); global batch t is positions [t·b, (t+1)·b).
// Row decomposition deals the offsets o of each batch cyclically (o -> rank o mod P), so rank
// r holds ⌈(b − r)/P⌉ rows (⌊b/P⌋ or ⌈b/P⌉) of every batch, one contiguous block of local
// rows per batch, and the batch sequence does not depend on P. The m mod b rows after the last
// whole batch (and every row of data that is not trained on, batch = 0) are dealt cyclically
// after them: they are the short batch t = ⌊m/b⌋ that ends every epoch, one contiguous block of
// local rows too. With P | b this is plain cyclic dealing (q -> rank q mod P, local index q / P).
// Column decomposition keeps every row and a contiguous block of columns.
#include <cstdint>
#include <vector>

#include "minisgd/config/config.hpp"
#include "minisgd/core/kokkos.hpp"

namespace minisgd {

struct Partition {
  Decomposition decomposition = Decomposition::row;
  int rank = 0;
  int ranks = 1;
  std::int64_t rows = 0;   // m, global
  std::int64_t cols = 0;   // d, global, intercept column included
  std::int64_t batch = 0;  // b of the batches dealt over the ranks (0: none, deal cyclically)

  std::int64_t local_rows() const;
  std::int64_t col_begin() const;
  std::int64_t col_end() const;
  std::int64_t local_cols() const { return col_end() - col_begin(); }
  /// Local index of global column j, or -1 when another rank holds it.
  std::int64_t local_col(std::int64_t j) const {
    return j >= col_begin() && j < col_end() ? j - col_begin() : -1;
  }
  /// The rank that holds shuffled position q (row decomposition).
  int owner(std::int64_t q) const;
  /// Local row index of shuffled position q, or -1 when another rank holds it.
  std::int64_t local_index(std::int64_t q) const;

  /// Rows of every batch held here (⌊b/P⌋ or ⌈b/P⌉ in the row decomposition, b in the column).
  KOKKOS_INLINE_FUNCTION std::int64_t local_batch() const {
    if (decomposition == Decomposition::column) return batch;
    return batch > rank ? (batch - rank + ranks - 1) / ranks : 0;
  }
  /// Local row of the first row of batch t held here (its rows are the next batch_rows(t)).
  KOKKOS_INLINE_FUNCTION std::int64_t batch_first(std::int64_t t) const {
    return t * local_batch();
  }
  /// Whole batches of b rows, ⌊m/b⌋.
  KOKKOS_INLINE_FUNCTION std::int64_t whole_batches() const { return batches(); }
  /// Rows of the short batch after them, m mod b (0: none).
  KOKKOS_INLINE_FUNCTION std::int64_t last_batch_rows() const { return rows - batched_rows(); }
  /// Rows of batch t held here: local_batch() for a whole batch, the local rows after the whole
  /// batches for the short one (t = whole_batches()).
  std::int64_t batch_rows(std::int64_t t) const {
    return t < batches() ? local_batch() : local_rows() - batched_local();
  }
  /// Shuffled position of local row l (the inverse of local_index).
  KOKKOS_INLINE_FUNCTION std::int64_t position(std::int64_t l) const {
    if (decomposition == Decomposition::column) return l;
    const std::int64_t per = local_batch(), in_batches = batched_local();
    if (l < in_batches) return l / per * batch + l % per * ranks + rank;
    return batched_rows() + (l - in_batches) * ranks + rank;
  }

 private:
  KOKKOS_INLINE_FUNCTION std::int64_t batches() const { return batch > 0 ? rows / batch : 0; }
  /// Positions in whole batches, and the local rows among them.
  KOKKOS_INLINE_FUNCTION std::int64_t batched_rows() const { return batches() * batch; }
  KOKKOS_INLINE_FUNCTION std::int64_t batched_local() const { return batches() * local_batch(); }
};

/// order[q] = original row at shuffled position q: a Fisher-Yates shuffle driven by a
/// counter-based generator, so every rank and platform computes the same permutation.
std::vector<std::int64_t> shuffled_order(std::int64_t m, std::uint64_t seed, bool shuffle);

/// The inverse: position[r] = shuffled position of original row r (empty when !shuffle:
/// the identity).
std::vector<std::int64_t> shuffled_positions(std::int64_t m, std::uint64_t seed, bool shuffle);

/// The order in which the batches of `epoch` are visited: identity unless reshuffling.
std::vector<std::int64_t> batch_order(std::int64_t batches, std::uint64_t seed, std::int64_t epoch,
                                      bool reshuffle);

}  // namespace minisgd
