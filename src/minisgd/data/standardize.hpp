#pragma once
// data.standardize (docs/input_deck.md): per-column statistics of the training set, in FP64,
// and the transform x ← (x − shift)·factor applied to the training and the test set alike.
#include <cstdint>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/config/config.hpp"
#include "minisgd/data/dataset.hpp"

namespace minisgd {

/// Collective: the mean μ and standard deviation σ (population, over every training row) of
/// each of this rank's columns, from FP64 values summed as double-double, so μ and σ are the
/// same doubles at any P and thread count. The row decomposition gathers the ranks' sums
/// (one allgather for the sums, one for the squares about μ: two passes, so a column with a
/// large mean loses no digits); a rank of the column decomposition holds its columns whole
/// and communicates nothing. standard:
/// shift μ, factor 1/σ; scale: shift 0, factor 1/σ. Columns with σ = 0 and the intercept
/// column keep shift 0 and factor 1. Empty for standardize: none.
template <class T>
ColumnScaling column_scaling(const Config& c, const Dataset<T>& training, comm::Communicator& comm);

/// Applies `s` to ds.X, rounding each result into the storage format as the loader rounds
/// (keyed by shuffled position and column, so the stored values do not depend on P).
template <class T>
void apply_scaling(const Config& c, const ColumnScaling& s, Dataset<T>& ds);

}  // namespace minisgd
