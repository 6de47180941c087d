#include "minisgd/data/sparse_share.hpp"

#include <algorithm>

#include "minisgd/core/errors.hpp"
#include "minisgd/core/kokkos.hpp"
#include "minisgd/data/share.hpp"
#include "minisgd/precision/storage_types.hpp"

namespace minisgd {

Layout storage_layout(const Config& c) {
  const bool needs_dense = c.data.standardize != Standardize::none;
  return c.data.layout == Layout::automatic && needs_dense ? Layout::dense : c.data.layout;
}

double sparse_density(const Config& c) {
  if (c.solver.method != Method::ca_sgd) return kSparseDensity;
  return kHostMemory ? kCaSgdSparseDensity : 0.0;
}

bool stores_sparse(Layout layout, double entries, std::int64_t rows, std::int64_t features,
                   double density) {
  if (layout != Layout::automatic) return layout == Layout::sparse;
  return entries < density * double(rows) * double(std::max<std::int64_t>(features, 1));
}

bool stores_sparse(const Config& c, double entries, std::int64_t rows, std::int64_t features) {
  return stores_sparse(storage_layout(c), entries, rows, features, sparse_density(c));
}

std::vector<std::int64_t> count_blocks(const Partition& p) {
  if (p.decomposition == Decomposition::row) return {0, p.cols};
  std::vector<std::int64_t> bounds;
  Partition q = p;
  for (int r = 0; r < p.ranks; ++r) {
    q.rank = r;
    bounds.push_back(q.col_begin());
  }
  bounds.push_back(p.cols);
  return bounds;
}

std::vector<std::int64_t> route_row_counts(const Partition& p,
                                           const std::vector<std::int64_t>& position,
                                           std::int64_t first_row,
                                           const std::vector<std::int32_t>& counts,
                                           comm::Communicator& comm) {
  const int P = comm.size(), me = comm.rank();
  const bool row = p.decomposition == Decomposition::row;
  const std::size_t blocks = row ? 1 : std::size_t(P);
  const std::size_t rows = counts.size() / blocks;
  // (local row, count) pairs per destination rank.
  std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(P));
  Partition owner = p;
  for (std::size_t k = 0; k < rows; ++k) {
    const std::int64_t r = first_row + std::int64_t(k);
    const std::int64_t q = position.empty() ? r : position[std::size_t(r)];
    if (row) {
      owner.rank = p.owner(q);
      out[std::size_t(owner.rank)].insert(out[std::size_t(owner.rank)].end(),
                                          {owner.local_index(q), counts[k]});
    } else {
      for (std::size_t b = 0; b < blocks; ++b)
        out[b].insert(out[b].end(), {q, counts[k * blocks + b]});
    }
  }
  std::vector<std::int64_t> local(std::size_t(p.local_rows()), 0);
  const auto take = [&](const std::vector<std::int64_t>& pairs) {
    for (std::size_t i = 0; i + 1 < pairs.size(); i += 2)
      local[std::size_t(pairs[i])] = pairs[i + 1];
  };
  std::vector<std::uint64_t> send(static_cast<std::size_t>(P)), recv(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r) send[std::size_t(r)] = out[std::size_t(r)].size();
  comm.alltoall(send.data(), recv.data(), 1, comm::DType::u64);
  std::vector<std::int64_t> in;
  for (int k = 1; k < P; ++k) {  // pairwise rounds, as the row router's
    const int to = (me + k) % P, from = (me - k + P) % P;
    in.resize(recv[std::size_t(from)]);
    comm.sendrecv(out[std::size_t(to)].data(), send[std::size_t(to)], to, in.data(),
                  recv[std::size_t(from)], from, comm::DType::i64);
    take(in);
  }
  take(out[std::size_t(me)]);
  return local;
}

template <class T>
void allocate_sparse_share(Dataset<T>& ds, const std::vector<std::int64_t>& counts,
                           const std::string& what, comm::Communicator& comm) {
  const std::int64_t m = ds.part.local_rows();
  std::int64_t nnz = 0;
  for (const std::int64_t n : counts) nnz += n;
  const long double bytes = (long double)(nnz) * (sizeof(std::int32_t) + sizeof(T)) +
                            (long double)(m + 1) * sizeof(std::int64_t) +
                            (long double)(m) * sizeof(double);
  ensure_fits(comm.allreduce_value(double(bytes), comm::Op::max), what + " (sparse share)", comm);
  ds.csr.row_map = Kokkos::View<std::int64_t*, MemSpace>("row_map", std::size_t(m) + 1);
  const auto row_map = Kokkos::create_mirror_view(ds.csr.row_map);
  row_map(0) = 0;
  for (std::int64_t l = 0; l < m; ++l) row_map(l + 1) = row_map(l) + counts[std::size_t(l)];
  Kokkos::deep_copy(ds.csr.row_map, row_map);
  ds.csr.entries = Kokkos::View<std::int32_t*, MemSpace>("entries", std::size_t(nnz));
  ds.csr.values = Vector<T>("values", std::size_t(nnz));
  ds.y = Vector<double>("y", std::size_t(m));
}

template void allocate_sparse_share(Dataset<double>&, const std::vector<std::int64_t>&,
                                    const std::string&, comm::Communicator&);
template void allocate_sparse_share(Dataset<float>&, const std::vector<std::int64_t>&,
                                    const std::string&, comm::Communicator&);
template void allocate_sparse_share(Dataset<precision::bf16>&, const std::vector<std::int64_t>&,
                                    const std::string&, comm::Communicator&);
template void allocate_sparse_share(Dataset<precision::fp16>&, const std::vector<std::int64_t>&,
                                    const std::string&, comm::Communicator&);

}  // namespace minisgd
