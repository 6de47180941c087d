#include "minisgd/data/standardize.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "minisgd/data/share.hpp"
#include "minisgd/precision/storage_types.hpp"

namespace minisgd {
namespace {

/// A sum carried as hi + lo (double-double): about 32 significant digits, so sums of the same
/// numbers grouped differently (by threads, by ranks) round to the same double.
struct Exact {
  double hi = 0, lo = 0;
  KOKKOS_INLINE_FUNCTION void add(double a_hi, double a_lo = 0) {
    const double s = hi + a_hi, bb = s - hi;
    const double e = (hi - (s - bb)) + (a_hi - bb) + lo + a_lo;  // TwoSum's error, then the tails
    hi = s + e;
    lo = e - (hi - s);
  }
};

/// Σ_l term(l, j) over the local rows for every local column j, as Exact sums: blocks of rows
/// summed in parallel (a block's rows stay in cache while its columns are swept), then the
/// blocks in order.
template <class Term>
std::vector<Exact> column_sums(const char* label, std::int64_t rows, std::int64_t cols,
                               const Term& term) {
  constexpr std::int64_t block = 512;
  const std::int64_t blocks = (rows + block - 1) / block;
  Kokkos::View<double***, Kokkos::LayoutRight, MemSpace> partial(std::string(label), blocks, cols,
                                                                 2);
  Kokkos::parallel_for(
      label, Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>({0, 0}, {blocks, cols}),
      KOKKOS_LAMBDA(const std::int64_t b, const std::int64_t j) {
        const std::int64_t end = kmin(rows, (b + 1) * block);
        Exact s;
        for (std::int64_t l = b * block; l < end; ++l) s.add(term(l, j));
        partial(b, j, 0) = s.hi;
        partial(b, j, 1) = s.lo;
      });
  const auto host = Kokkos::create_mirror_view_and_copy(HostSpace(), partial);
  std::vector<Exact> sum(static_cast<std::size_t>(cols));
  for (std::int64_t b = 0; b < blocks; ++b)
    for (std::int64_t j = 0; j < cols; ++j) sum[std::size_t(j)].add(host(b, j, 0), host(b, j, 1));
  return sum;
}

/// The column sums of every rank of the row decomposition added (one allgather of the Exact
/// parts, added in rank order), rounded to double: the same at every P.
std::vector<double> total(const std::vector<Exact>& mine, bool reduce, comm::Communicator& comm) {
  std::vector<double> out(mine.size());
  if (!reduce) {
    for (std::size_t j = 0; j < mine.size(); ++j) out[j] = mine[j].hi + mine[j].lo;
    return out;
  }
  std::vector<double> send(2 * mine.size()), all(send.size() * std::size_t(comm.size()));
  for (std::size_t j = 0; j < mine.size(); ++j) {
    send[2 * j] = mine[j].hi;
    send[2 * j + 1] = mine[j].lo;
  }
  comm.allgather(send.data(), all.data(), send.size());
  for (std::size_t j = 0; j < mine.size(); ++j) {
    Exact s;
    for (std::size_t r = 0; r < std::size_t(comm.size()); ++r)
      s.add(all[r * send.size() + 2 * j], all[r * send.size() + 2 * j + 1]);
    out[j] = s.hi + s.lo;
  }
  return out;
}

Vector<double> to_device(const char* label, const std::vector<double>& v) {
  Vector<double> d(std::string(label), v.size());
  const auto h = Kokkos::create_mirror_view(d);
  for (std::size_t j = 0; j < v.size(); ++j) h(j) = v[j];
  Kokkos::deep_copy(d, h);
  return d;
}

}  // namespace

template <class T>
ColumnScaling column_scaling(const Config& c, const Dataset<T>& training,
                             comm::Communicator& comm) {
  if (c.data.standardize == Standardize::none) return {};
  const Partition& p = training.part;
  const auto X = training.X;
  const std::int64_t rows = p.local_rows(), cols = p.local_cols();
  // The row decomposition spreads each column's rows over the ranks; the column one does not.
  const bool reduce = p.decomposition == Decomposition::row && p.ranks > 1;
  std::vector<double> mean = total(
      column_sums(
          "minisgd::column_sums", rows, cols,
          KOKKOS_LAMBDA(std::int64_t l, std::int64_t j) { return precision::to_double(X(l, j)); }),
      reduce, comm);
  for (double& m : mean) m /= double(p.rows);
  // Centred squares in a second pass: a column with a large mean loses no digits to
  // Σx² − m·μ² cancellation.
  const Vector<double> mu = to_device("minisgd::column_mean", mean);
  const std::vector<double> var = total(column_sums(
                                            "minisgd::column_squares", rows, cols,
                                            KOKKOS_LAMBDA(std::int64_t l, std::int64_t j) {
                                              const double d =
                                                  precision::to_double(X(l, j)) - mu(j);
                                              return d * d;
                                            }),
                                        reduce, comm);
  const std::int64_t intercept = c.model.intercept ? training.features : -1;
  std::vector<double> shift(std::size_t(cols), 0.0), factor(std::size_t(cols), 1.0);
  for (std::int64_t j = 0; j < cols; ++j) {
    const double sigma = std::sqrt(var[std::size_t(j)] / double(p.rows));
    if (!(sigma > 0) || p.col_begin() + j == intercept) continue;
    factor[std::size_t(j)] = 1.0 / sigma;
    if (c.data.standardize == Standardize::standard) shift[std::size_t(j)] = mean[std::size_t(j)];
  }
  return {to_device("minisgd::scaling_shift", shift), to_device("minisgd::scaling_factor", factor)};
}

template <class T>
void apply_scaling(const Config& c, const ColumnScaling& s, Dataset<T>& ds) {
  if (s.empty()) return;
  const Partition p = ds.part;
  const auto X = ds.X;
  const auto shift = s.shift, factor = s.factor;
  const DataStore<T> store = data_store<T>(c, p.cols);
  const std::int64_t c0 = p.col_begin();
  Kokkos::parallel_for(
      "minisgd::standardize",
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>({0, 0}, {p.local_rows(), p.local_cols()}),
      KOKKOS_LAMBDA(const std::int64_t l, const std::int64_t j) {
        if (factor(j) == 1.0 && shift(j) == 0.0) return;
        const double x = (precision::to_double(X(l, j)) - shift(j)) * factor(j);
        X(l, j) = store(x, p.position(l), c0 + j);
      });
  fence("standardized");
}

#define MINISGD_STANDARDIZE(T)                                                                     \
  template ColumnScaling column_scaling<T>(const Config&, const Dataset<T>&, comm::Communicator&); \
  template void apply_scaling<T>(const Config&, const ColumnScaling&, Dataset<T>&);
MINISGD_STANDARDIZE(float)
MINISGD_STANDARDIZE(double)
MINISGD_STANDARDIZE(precision::bf16)
MINISGD_STANDARDIZE(precision::fp16)
#undef MINISGD_STANDARDIZE

}  // namespace minisgd
