#pragma once
#include <cstdint>
#include <string>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/data/partition.hpp"

namespace minisgd {

/// data.standardize's transform of this rank's columns, x ← (x − shift(j))·factor(j)
/// (data/standardize.hpp). Empty views: none.
struct ColumnScaling {
  Vector<double> shift;
  Vector<double> factor;
  bool empty() const { return factor.extent(0) == 0; }
};

/// The rows and columns one rank holds, in shuffled order (see partition.hpp), stored as T.
template <class T>
struct Dataset {
  Matrix<T> X;       // local_rows × local_cols, row-major
  Vector<double> y;  // labels of the local rows (±1 for logistic)
  Partition part;
  std::int64_t features = 0;  // d of the data, without the intercept column
  std::string description;
  ColumnScaling scaling;  // applied to X: the training set's statistics (empty: none)

  std::size_t matrix_bytes() const { return X.span() * sizeof(T); }
};

}  // namespace minisgd
