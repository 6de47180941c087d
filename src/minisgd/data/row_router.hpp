#pragma once
// Sends rows read anywhere to the ranks that keep them. A reader adds the rows it parsed or
// read (original row number, label, sparse entries); the router rounds each value into the
// storage type, packs it for its owner (row decomposition: the rank of the row's shuffled
// position; column decomposition: every rank, each its slice of columns) and, at exchange(),
// a collective, swaps the packed rows and writes those received into this rank's share.
// Between exchanges it holds only the rows added since the last one: bounded buffers. A
// sparse share (allocate_sparse_share, its row_map set) takes each row in place.
#include <cstdint>
#include <vector>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/data/dataset.hpp"
#include "minisgd/data/share.hpp"

namespace minisgd {

template <class T>
class RowRouter {
 public:
  /// `position[r]`: the shuffled position of original row r (empty: position = r).
  RowRouter(Dataset<T>& ds, std::vector<std::int64_t> position, DataStore<T> store, bool intercept);
  void add(std::int64_t row, double label, const std::int64_t* col, const double* val,
           std::int64_t n);
  /// Collective: every rank calls it the same number of times.
  void exchange(comm::Communicator& comm);
  /// Copies the filled share to the device (after the last exchange).
  void finish();
  std::uint64_t buffered_bytes() const { return buffered_; }
  /// The first value added whose stored form is not finite (the storage type's range is too
  /// small for it): the reader names its line and refuses the data. col < 0: none yet.
  struct Overflow {
    std::int64_t col = -1;
    double value = 0;
  };
  const Overflow& overflow() const { return overflow_; }

 private:
  void pack(int dest, std::int64_t local, std::int64_t row, double label, const std::int64_t* col,
            const double* val, std::int64_t n, std::int64_t c0, std::int64_t c1);
  void unpack(const char* p, const char* end);

  Dataset<T>& ds_;
  typename Matrix<T>::HostMirror X_;
  typename Kokkos::View<std::int64_t*, MemSpace>::HostMirror row_map_;  // sparse: read only
  typename Kokkos::View<std::int32_t*, MemSpace>::HostMirror entries_;
  typename Vector<T>::HostMirror values_;
  typename Vector<double>::HostMirror y_;
  std::vector<std::int64_t> position_;
  DataStore<T> store_;
  bool intercept_;
  std::vector<std::vector<char>> out_;  // packed rows per destination rank
  std::vector<char> in_;
  std::uint64_t buffered_ = 0;
  Overflow overflow_;
};

}  // namespace minisgd
