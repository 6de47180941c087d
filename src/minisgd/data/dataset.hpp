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

/// A rank's share in compressed sparse rows (data.layout: sparse): row l's values are
/// values[row_map(l) .. row_map(l+1)), in increasing local column `entries`. The names and
/// index types are Kokkos Kernels' (KokkosSparse::CrsMatrix's row_map, entries, values), so a
/// share of a scalar it knows wraps into one without a copy.
template <class T>
struct SparseRows {
  Kokkos::View<std::int64_t*, MemSpace> row_map;  // local_rows + 1 offsets
  Kokkos::View<std::int32_t*, MemSpace> entries;  // column within this rank's block
  Vector<T> values;
  std::int64_t nnz() const { return std::int64_t(entries.extent(0)); }
  std::size_t bytes() const {
    return row_map.span() * sizeof(std::int64_t) + entries.span() * sizeof(std::int32_t) +
           values.span() * sizeof(T);
  }
};

/// The most entries of any row of X (0 for no rows).
template <class S>
std::int64_t longest_row(const SparseRows<S>& X) {
  const auto row_map = X.row_map;
  std::int64_t most = 0;
  if (row_map.extent(0) > 1)
    Kokkos::parallel_reduce(
        "minisgd::longest_row", Kokkos::RangePolicy<ExecSpace>(0, row_map.extent(0) - 1),
        KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& m) {
          m = kmax(m, row_map(i + 1) - row_map(i));
        },
        Kokkos::Max<std::int64_t>(most));
  return most;
}

/// The rows and columns one rank holds, in shuffled order (see partition.hpp), stored as T:
/// dense in X, or sparse in csr (then X is empty).
template <class T>
struct Dataset {
  Matrix<T> X;        // local_rows × local_cols, row-major
  SparseRows<T> csr;  // the share when sparse() (data.layout)
  Vector<double> y;   // labels of the local rows (±1 for logistic)
  Partition part;
  std::int64_t features = 0;  // d of the data, without the intercept column
  std::string description;
  ColumnScaling scaling;  // applied to X: the training set's statistics (empty: none)

  bool sparse() const { return csr.row_map.extent(0) > 0; }
  std::size_t matrix_bytes() const { return sparse() ? csr.bytes() : X.span() * sizeof(T); }
};

}  // namespace minisgd
