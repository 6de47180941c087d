#pragma once
// What every loader needs to lay out and store this rank's share: the partition (with the
// deck checks that depend on the data's shape), the rounding of values into the storage
// type, the label checks of each loss, and a refusal, before allocating, of a share that
// cannot fit in memory.
#include <cstdint>
#include <string>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/config/config.hpp"
#include "minisgd/core/huge_pages.hpp"
#include "minisgd/data/dataset.hpp"
#include "minisgd/precision/plan.hpp"

namespace minisgd {

/// Rounds a value of the data to precision.data (stochastic rounding keyed by its global
/// original row and column, so the stored matrix does not depend on P) and stores it as T,
/// the format's container.
template <class T>
struct DataStore {
  precision::Rounder round;
  std::int64_t cols;
  KOKKOS_INLINE_FUNCTION T operator()(double x, std::int64_t row, std::int64_t col) const {
    return precision::round_into<T>(round, x, 0, std::uint64_t(row * cols + col));
  }
};

template <class T>
DataStore<T> data_store(const Config& c, std::int64_t cols) {
  return {precision::rounder(c.precision.plan, precision::Knob::data, precision::Format::fp64,
                             c.run.seed),
          cols};
}

/// The partition of a rows × cols problem (cols with the intercept): training data deal
/// solver.batch_size over the ranks, other data are dealt cyclically.
Partition make_partition(const Config& c, std::int64_t rows, std::int64_t cols, int rank, int ranks,
                         bool training);

/// Checks the batch size and the rank count against a training partition (InputError naming
/// the deck key).
void check_partition(const Config& c, const Partition& p);

/// Logistic labels must be ±1 (0/1 are mapped); Poisson labels are counts ≥ 0. Returns an
/// empty string and sets `out`, or the reason the label is refused.
std::string checked_label(Loss loss, double y, double& out);

/// Why a value of column `col` (0-based) is refused after it was stored: not finite in the
/// storage format of precision.data (it overflowed, or a binary file holds inf or NaN). The
/// data is at fault, not the solver: the run would only diverge at iteration 0.
std::string stored_value_problem(const Config& c, std::int64_t col, double value);

/// Bytes of the largest rank's share (matrix and labels) stored as `element_bytes`.
std::uint64_t share_bytes(const Partition& p, std::size_t element_bytes);

/// Collective: refuses (InputError on every rank) a share larger than the memory this node
/// has available, with the bytes needed per rank, instead of failing in the allocation.
void ensure_share_fits(const Partition& p, std::size_t element_bytes, const std::string& what,
                       comm::Communicator& comm);

/// Collective: refuses (InputError on every rank, "what: needs N bytes per rank ...") a
/// working set larger than the memory this node has available, before it is allocated.
void ensure_fits(long double bytes_per_rank, const std::string& what, comm::Communicator& comm);

/// Collective: when any rank has a non-empty `error`, every rank throws InputError with the
/// lowest such rank's message (so no rank is left waiting in a later collective).
void agree_on_error(comm::Communicator& comm, const std::string& error);

/// Allocates this rank's X and y (after ensure_share_fits), X in huge pages where the host
/// offers them on request (core/huge_pages.hpp), zeroed unless the caller writes every element
/// itself (`zeroed` false saves a pass over the share).
template <class T>
void allocate_share(Dataset<T>& ds, bool zeroed = true) {
  const std::int64_t m = ds.part.local_rows(), n = ds.part.local_cols();
  ds.X = in_huge_pages<Matrix<T>>("X", m, n);
  ds.y = Vector<double>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "y"), m);
  if (zeroed) {
    Kokkos::deep_copy(ds.X, T{});
    Kokkos::deep_copy(ds.y, 0.0);
  }
}

}  // namespace minisgd
