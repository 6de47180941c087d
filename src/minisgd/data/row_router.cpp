#include "minisgd/data/row_router.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "minisgd/core/errors.hpp"
#include "minisgd/precision/storage_types.hpp"

namespace minisgd {
namespace {

// A packed row: local index, label, entry count n, then n local columns (int32) and n values.
struct RowHeader {
  std::int64_t local;
  double label;
  std::int64_t n;
};

}  // namespace

template <class T>
RowRouter<T>::RowRouter(Dataset<T>& ds, std::vector<std::int64_t> position, DataStore<T> store,
                        bool intercept)
    : ds_(ds),
      X_(Kokkos::create_mirror_view(ds.X)),
      row_map_(Kokkos::create_mirror_view_and_copy(HostSpace(), ds.csr.row_map)),
      entries_(Kokkos::create_mirror_view(ds.csr.entries)),
      values_(Kokkos::create_mirror_view(ds.csr.values)),
      y_(Kokkos::create_mirror_view(ds.y)),
      position_(std::move(position)),
      store_(store),
      intercept_(intercept),
      out_(std::size_t(ds.part.ranks)) {
  Kokkos::deep_copy(X_, T{});
}

template <class T>
void RowRouter<T>::add(std::int64_t row, double label, const std::int64_t* col, const double* val,
                       std::int64_t n) {
  const Partition& p = ds_.part;
  const std::int64_t q = position_.empty() ? row : position_[std::size_t(row)];
  if (p.decomposition == Decomposition::row) {
    Partition owner = p;
    owner.rank = p.owner(q);
    pack(owner.rank, owner.local_index(q), row, label, col, val, n, 0, p.cols);
    return;
  }
  Partition owner = p;
  for (int r = 0; r < p.ranks; ++r) {
    owner.rank = r;
    pack(r, q, row, label, col, val, n, owner.col_begin(), owner.col_end());
  }
}

template <class T>
void RowRouter<T>::pack(int dest, std::int64_t local, std::int64_t row, double label,
                        const std::int64_t* col, const double* val, std::int64_t n, std::int64_t c0,
                        std::int64_t c1) {
  const std::int64_t* b = std::lower_bound(col, col + n, c0);
  const std::int64_t* e = std::lower_bound(b, col + n, c1);
  const std::int64_t d = ds_.features;
  const bool with_one = intercept_ && d >= c0 && d < c1;
  const RowHeader h{local, label, std::int64_t(e - b) + (with_one ? 1 : 0)};
  std::vector<char>& out = out_[std::size_t(dest)];
  const std::size_t before = out.size();
  // One resize per row (not per value): growing a vector value-initialises what it adds.
  out.resize(before + sizeof h + std::size_t(h.n) * (sizeof(std::int32_t) + sizeof(T)));
  char* at = out.data() + before;
  const auto put = [&at](const auto& v) {
    std::memcpy(at, &v, sizeof v);
    at += sizeof v;
  };
  put(h);
  for (const std::int64_t* k = b; k < e; ++k) put(std::int32_t(*k - c0));
  if (with_one) put(std::int32_t(d - c0));
  for (const std::int64_t* k = b; k < e; ++k) {
    const T v = store_(val[k - col], row, *k);
    if (!std::isfinite(precision::to_double(v)) && overflow_.col < 0)
      overflow_ = {*k, val[k - col]};
    put(v);
  }
  if (with_one) put(store_(1.0, row, d));
  buffered_ += out.size() - before;
}

template <class T>
void RowRouter<T>::unpack(const char* p, const char* end) {
  while (p < end) {
    RowHeader h;
    std::memcpy(&h, p, sizeof h);
    p += sizeof h;
    const char* vals = p + h.n * sizeof(std::int32_t);
    y_(h.local) = h.label;
    if (ds_.sparse()) {
      const std::int64_t at = row_map_(h.local);
      if (row_map_(h.local + 1) - at != h.n)
        throw RuntimeFailure("internal: a row's entries were miscounted before it arrived");
      std::memcpy(entries_.data() + at, p, std::size_t(h.n) * sizeof(std::int32_t));
      std::memcpy(values_.data() + at, vals, std::size_t(h.n) * sizeof(T));
      p = vals + h.n * sizeof(T);
      continue;
    }
    for (std::int64_t k = 0; k < h.n; ++k) {
      std::int32_t j;
      T v;
      std::memcpy(&j, p + k * sizeof j, sizeof j);
      std::memcpy(&v, vals + k * sizeof v, sizeof v);
      X_(h.local, j) = v;
    }
    p = vals + h.n * sizeof(T);
  }
}

template <class T>
void RowRouter<T>::exchange(comm::Communicator& comm) {
  const int P = comm.size(), me = comm.rank();
  std::vector<std::uint64_t> send(static_cast<std::size_t>(P)), recv(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r) send[std::size_t(r)] = out_[std::size_t(r)].size();
  comm.alltoall(send.data(), recv.data(), 1, comm::DType::u64);
  // Pairwise rounds: in round k, send to rank + k and receive from rank − k.
  for (int k = 1; k < P; ++k) {
    const int to = (me + k) % P, from = (me - k + P) % P;
    in_.resize(recv[std::size_t(from)]);
    comm.sendrecv(out_[std::size_t(to)].data(), send[std::size_t(to)], to, in_.data(),
                  recv[std::size_t(from)], from, comm::DType::u8);
    unpack(in_.data(), in_.data() + in_.size());
    out_[std::size_t(to)].clear();
  }
  std::vector<char>& mine = out_[std::size_t(me)];
  unpack(mine.data(), mine.data() + mine.size());
  mine.clear();
  buffered_ = 0;
}

template <class T>
void RowRouter<T>::finish() {
  Kokkos::deep_copy(ds_.X, X_);
  Kokkos::deep_copy(ds_.csr.entries, entries_);
  Kokkos::deep_copy(ds_.csr.values, values_);
  Kokkos::deep_copy(ds_.y, y_);
}

template class RowRouter<double>;
template class RowRouter<float>;
template class RowRouter<precision::bf16>;
template class RowRouter<precision::fp16>;

}  // namespace minisgd
