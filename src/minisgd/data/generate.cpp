// Synthetic data, generated in place: each rank draws only the entries of its share, each
// once, and the labels come from the margins (summed over the column blocks with one integer
// AllReduce per chunk of rows in the column decomposition).
#include "minisgd/data/generate.hpp"

#include <algorithm>
#include <type_traits>

#include "minisgd/comm/view_collectives.hpp"
#include "minisgd/core/errors.hpp"
#include "minisgd/data/share.hpp"
#include "minisgd/data/synthetic.hpp"

namespace minisgd {
namespace {

constexpr std::int64_t kLabelChunkRows = 1 << 20;  // bounds the margin buffer: 8 MiB

/// True when storing a generated value (a float) as T needs no rounding: then the columns
/// loop is a plain vectorisable store.
template <class T>
bool stores_exactly(const DataStore<T>& store) {
  const precision::Format f = store.round.format;
  return (std::is_same_v<T, float> || std::is_same_v<T, double>)&&(f == precision::Format::fp32 ||
                                                                   f == precision::Format::fp64);
}

template <class T>
KOKKOS_INLINE_FUNCTION T exact_value(float x) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return T(x);
  } else {
    return precision::convert<T>(x);  // not reached: stores_exactly is false for T
  }
}

/// The features of rows [begin, end) of the share and their partial margins Σ level·W.
template <class T>
void fill_rows(const Dataset<T>& ds, const SyntheticGenerator& gen, const DataStore<T>& store,
               bool intercept, std::int64_t begin, std::int64_t end,
               const Kokkos::View<const std::int32_t*, MemSpace>& w,
               const Kokkos::View<std::int64_t*, MemSpace>& margin) {
  const Partition p = ds.part;  // a copy: the kernel reads it
  const auto X = ds.X;
  const std::int64_t d = ds.features, c0 = p.col_begin(), c1 = p.col_end();
  const std::int64_t last = std::min(c1, d);  // generated columns: [c0, last)
  const bool exact = stores_exactly(store);
  // Local row l is position p.position(l); synthetic rows are i.i.d., so position q is row q
  // and no shuffle is needed.
  Kokkos::parallel_for(
      "minisgd::generate_rows", Kokkos::RangePolicy<ExecSpace>(begin, end),
      KOKKOS_LAMBDA(const std::int64_t l) {
        const std::int64_t r = p.position(l);
        const std::uint64_t key = gen.row_key(r);
        T* const row = X.data() + l * X.stride_0();
        std::int64_t z = 0;
        if (exact) {
          for (std::int64_t j = c0; j < last; ++j) {
            const std::int32_t q = SyntheticGenerator::level(key, j);
            row[j - c0] = exact_value<T>(gen.value(q));
            z += std::int64_t(q * w(j));
          }
        } else {
          for (std::int64_t j = c0; j < last; ++j) {
            const std::int32_t q = SyntheticGenerator::level(key, j);
            row[j - c0] = store(gen.value(q), r, j);
            z += std::int64_t(q * w(j));
          }
        }
        if (intercept && d >= c0 && d < c1) X(l, d - c0) = store(1.0, r, d);
        margin(l - begin) = z;
      });
}

template <class T>
void fill_labels(const Dataset<T>& ds, const SyntheticGenerator& gen, std::int64_t begin,
                 std::int64_t end, const Kokkos::View<const std::int64_t*, MemSpace>& margin) {
  const auto y = ds.y;
  const Partition p = ds.part;
  Kokkos::parallel_for(
      "minisgd::generate_labels", Kokkos::RangePolicy<ExecSpace>(begin, end),
      KOKKOS_LAMBDA(const std::int64_t l) { y(l) = gen.label(p.position(l), margin(l - begin)); });
}

}  // namespace

template <class T>
Dataset<T> generate(const Config& c, comm::Communicator& comm) {
  const SyntheticShape shape = synthetic_shape(c.data.synthetic);
  // Labels are drawn for one loss; another loss may only reuse them where they are valid.
  if (c.model.loss != shape.loss && c.model.loss != Loss::linear)
    throw InputError(std::string("data.synthetic.kind: ") + to_string(c.data.synthetic.kind) +
                     " draws labels for " + to_string(shape.loss) +
                     " regression, not for model.loss " + to_string(c.model.loss));
  const SyntheticGenerator gen(c.run.seed, shape, c.data.synthetic.noise);
  const std::int64_t d = shape.features;
  const std::int64_t cols = d + (c.model.intercept ? 1 : 0);
  Dataset<T> ds;
  ds.part = make_partition(c, shape.rows, cols, comm.rank(), comm.size(), true);
  check_partition(c, ds.part);
  ds.features = d;
  ds.description = std::string(to_string(c.data.synthetic.kind)) + " (" +
                   std::to_string(shape.rows) + " x " + std::to_string(d) + ")";
  ensure_share_fits(ds.part, sizeof(T), "data.synthetic", comm);
  allocate_share(ds, false);  // every element is generated

  Kokkos::View<std::int32_t*, MemSpace> w("w*", d);
  const auto w_host = Kokkos::create_mirror_view(w);
  for (std::int64_t j = 0; j < d; ++j) w_host(j) = gen.true_weight(j);
  Kokkos::deep_copy(w, w_host);
  const std::int64_t m = ds.part.local_rows();
  Kokkos::View<std::int64_t*, MemSpace> margin("margins", std::min(m, kLabelChunkRows));
  const DataStore<T> store = data_store<T>(c, cols);
  const bool partial = ds.part.decomposition == Decomposition::column && comm.size() > 1;
  // In the column decomposition every rank has every row, so all run the same chunks.
  for (std::int64_t begin = 0; begin < m; begin += kLabelChunkRows) {
    const std::int64_t end = std::min(m, begin + kLabelChunkRows);
    fill_rows(ds, gen, store, c.model.intercept, begin, end, w, margin);
    const auto chunk = Kokkos::subview(margin, std::make_pair(std::int64_t(0), end - begin));
    if (partial) comm::allreduce(comm, chunk, comm::Op::sum);
    fill_labels(ds, gen, begin, end, chunk);
  }
  fence("data generated");
  return ds;
}

template Dataset<float> generate<float>(const Config&, comm::Communicator&);
template Dataset<double> generate<double>(const Config&, comm::Communicator&);
template Dataset<precision::bf16> generate<precision::bf16>(const Config&, comm::Communicator&);
template Dataset<precision::fp16> generate<precision::fp16>(const Config&, comm::Communicator&);

}  // namespace minisgd
