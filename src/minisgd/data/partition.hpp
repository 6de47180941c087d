#pragma once
// Which global rows and columns a rank holds. Rows are shuffled once with the run seed
// (position q holds original row order[q]); global batch t is positions [t·b, (t+1)·b).
// Row decomposition deals positions cyclically (q -> rank q mod P, local index q / P), so
// with P | b every global batch is the same contiguous block of b/P local rows on every
// rank and the batch sequence does not depend on P. Column decomposition keeps every row
// and a contiguous block of columns.
#include <cstdint>
#include <vector>

#include "minisgd/config/config.hpp"

namespace minisgd {

struct Partition {
  Decomposition decomposition = Decomposition::row;
  int rank = 0;
  int ranks = 1;
  std::int64_t rows = 0;  // m, global
  std::int64_t cols = 0;  // d, global, intercept column included

  std::int64_t local_rows() const;
  std::int64_t col_begin() const;
  std::int64_t col_end() const;
  std::int64_t local_cols() const { return col_end() - col_begin(); }
  /// Local row index of shuffled position q, or -1 when another rank holds it.
  std::int64_t local_index(std::int64_t q) const;
  /// Rows of one batch of global size b held here (b / P or b).
  std::int64_t local_batch(std::int64_t b) const;
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
