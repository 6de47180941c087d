#include "minisgd/compress/exact_sparse.hpp"

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "minisgd/compress/record.hpp"

namespace minisgd::compress {

template <class T>
ExactSparse<T>::ExactSparse(comm::Communicator& comm, std::size_t d)
    : comm_(comm),
      index_("sparse_index", d),
      value_("sparse_value", d),
      counts_(std::size_t(comm.size())) {
  if (d > std::size_t(INT32_MAX))
    throw std::invalid_argument("compression.method: sparse sends 32-bit indices: d too large");
}

template <class T>
nlohmann::json ExactSparse<T>::describe() const {
  return {{"method", "sparse"}, {"pairs", last_max_}};
}

template <class T>
void ExactSparse<T>::reduce(const Vector<T>& local, const Vector<T>& sum) {
  const auto index = index_.device;
  const auto value = value_.device;
  std::int64_t n = 0;  // this rank's nonzeros, compacted
  if constexpr (kHostMemory) {
    if (told_) {  // among the batch's columns, in the order given
      for (std::int64_t j = 0; j < touched_count_; ++j) {
        const std::int32_t i = touched_[j];
        if (local(i) != T(0)) {
          index(n) = i;
          value(n++) = local(i);
        }
      }
    }
  }
  if (!told_ || !kHostMemory)  // a scan of all d, in index order
    Kokkos::parallel_scan(
        "minisgd::sparse_compact", Kokkos::RangePolicy<ExecSpace>(0, local.extent(0)),
        KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& at, const bool final) {
          const T g = local(i);
          if (g != T(0)) {
            if (final) {
              index(at) = std::int32_t(i);
              value(at) = g;
            }
            ++at;
          }
        },
        n);
  told_ = false;  // the list holds for this reduce only
  comm_.allgather(&n, counts_.data(), 1);
  std::int64_t m = 0;
  for (const std::int64_t c : counts_) m = c > m ? c : m;
  last_max_ = m;
  const std::size_t P = std::size_t(comm_.size());
  if (gathered_index_.size() < P * std::size_t(m)) {
    gathered_index_ = Staged<std::int32_t>("sparse_gathered_index", P * std::size_t(m));
    gathered_value_ = Staged<T>("sparse_gathered_value", P * std::size_t(m));
  }
  sync_for_host("sparse pairs read on the host");
  const auto head = Kokkos::make_pair(std::size_t(0), std::size_t(m));
  Kokkos::deep_copy(Kokkos::subview(index_.host, head), Kokkos::subview(index, head));
  Kokkos::deep_copy(Kokkos::subview(value_.host, head), Kokkos::subview(value, head));
  comm_.allgather(index_.host.data(), gathered_index_.host.data(), std::size_t(m));
  comm_.allgather(value_.host.data(), gathered_value_.host.data(), std::size_t(m));
  gathered_index_.to_device();
  gathered_value_.to_device();
  Kokkos::deep_copy(sum, T(0));
  const auto gi = gathered_index_.device;
  const auto gv = gathered_value_.device;
  for (std::size_t p = 0; p < P; ++p) {  // rank by rank: the indices of one rank are distinct
    const std::int64_t base = std::int64_t(p) * m;
    Kokkos::parallel_for(
        "minisgd::sparse_sum", Kokkos::RangePolicy<ExecSpace>(0, counts_[p]),
        KOKKOS_LAMBDA(const std::int64_t j) { sum(gi(base + j)) += gv(base + j); });
  }
}

template class ExactSparse<float>;
template class ExactSparse<double>;

namespace {

/// What the layers above the deck know of compression.method: sparse (record.hpp).
struct SparseMethod {
  template <class T>
  static std::unique_ptr<Compressor<T>> make(const CompressionConfig&, const Setup& s) {
    return std::make_unique<ExactSparse<T>>(s.comm, s.d);
  }

  /// The counts, then indices and values: at worst all d.
  static std::vector<Collective> traffic(const CompressionConfig&, const Exchange& e) {
    return {Collective::allgather(8), Collective::allgather(4 * e.d),
            Collective::allgather(e.value_bytes * e.d)};
  }

  /// An index and a value per column.
  static double bytes_held(const CompressionConfig&, const Exchange& e) {
    return (4 + e.value_bytes) * e.d;
  }

  static constexpr bool merges = false;
};

}  // namespace

const CompressorRecord sparse_record = record_of<SparseMethod>();

}  // namespace minisgd::compress
