#pragma once
// Synthetic sparse GLM problems (data.synthetic.kind: sparse and the *-like stand-ins of
// LIBSVM's sparse sets). Row r has about nnz_per_row·(1 ± spread) distinct features, each drawn
// with probability ∝ (k + 1)^-zipf of its frequency rank k, the ranks scattered over the columns
// by a fixed bijection so that no column block holds every frequent feature. Like the dense
// generator (synthetic.hpp), everything derives from counter-based hashes of (seed, row,
// column), so any rank generates any row, the data never depend on P, and a row's margin
// against the planted w* (nonzero on one column in eight) is an exact integer sum.
#include <cstdint>
#include <vector>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/config/config.hpp"
#include "minisgd/data/dataset.hpp"
#include "minisgd/data/synthetic.hpp"

namespace minisgd {

struct SparseShape {
  std::int64_t rows;
  std::int64_t features;
  double nnz_per_row;  // mean
  double spread;       // a row has mean·(1 ± spread) draws, uniform
  double zipf;         // the exponent of the feature frequencies
};

/// The shape of a sparse kind, the deck's sizes in place of the kind's own where given.
SparseShape sparse_shape(const SyntheticConfig& c);

class SparseRowGenerator {
 public:
  SparseRowGenerator(std::uint64_t seed, const SparseShape& shape, Loss loss, double noise);
  /// The distinct columns of row r, increasing, into `cols`.
  void columns(std::int64_t r, std::vector<std::int64_t>& cols) const;
  /// The value of entry (r, col), r's key from key(r); and its exact share of r's margin.
  std::uint64_t key(std::int64_t r) const { return dense_.row_key(r); }
  float value(std::uint64_t key, std::int64_t col) const {
    return dense_.value(SyntheticGenerator::level(key, col));
  }
  std::int64_t margin_term(std::uint64_t key, std::int64_t col) const;
  double label(std::int64_t r, std::int64_t margin) const { return dense_.label(r, margin); }

 private:
  SparseShape shape_;
  SyntheticGenerator dense_;  // the values, weights and labels of the dense generator
  std::uint64_t seed_;
  std::int64_t stride_;  // the bijection k -> (k·stride + 1) mod d of ranks onto columns
};

/// This rank's share of a sparse synthetic problem, stored sparse (collective).
template <class T>
Dataset<T> generate_sparse(const Config& c, comm::Communicator& comm);

}  // namespace minisgd
