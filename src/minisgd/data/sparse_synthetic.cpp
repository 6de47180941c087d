#include "minisgd/data/sparse_synthetic.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "minisgd/core/errors.hpp"
#include "minisgd/data/share.hpp"
#include "minisgd/data/sparse_share.hpp"

namespace minisgd {
namespace {

constexpr std::uint64_t kGolden = SyntheticGenerator::kGolden;

std::uint64_t mix(std::uint64_t z) {  // SplitMix64's output function
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
double unit(std::uint64_t bits) { return (double(bits >> 11) + 0.5) * 1.1102230246251565e-16; }

/// The planted w* is nonzero on the columns whose hash has its low three bits clear.
bool planted(std::uint64_t seed, std::int64_t col) {
  return (mix(seed ^ (kGolden * std::uint64_t(col + 1))) & 7u) == 0;
}

double margin_std(Loss loss) {
  switch (loss) {
    case Loss::logistic: return 2.0;
    case Loss::linear: return 1.0;
    case Loss::poisson: return 0.5;
  }
  return 1.0;
}

SyntheticShape value_shape(const SparseShape& s, Loss loss) {
  // Entries of std 1/√nnz (rows of norm about 1); w* spread so that x·w* has margin_std.
  const double planted_per_row = std::max(1.0, s.nnz_per_row / 8.0);
  return {s.rows, std::int64_t(std::ceil(planted_per_row)), loss,
          1.0 / std::sqrt(std::max(1.0, s.nnz_per_row)), margin_std(loss)};
}

}  // namespace

SparseShape sparse_shape(const SyntheticConfig& c) {
  // Rows, features and mean nonzeros per row of LIBSVM's sets (binary classification pages).
  SparseShape s{100000, std::int64_t(1) << 20, 64, c.nnz_spread, c.zipf};
  switch (c.kind) {
    case SyntheticKind::rcv1_like: s = {20242, 47236, 74, c.nnz_spread, c.zipf}; break;
    case SyntheticKind::news20_like: s = {19996, 1355191, 455, c.nnz_spread, c.zipf}; break;
    case SyntheticKind::url_like: s = {2396130, 3231961, 116, c.nnz_spread, c.zipf}; break;
    case SyntheticKind::kdd2010_like: s = {8407752, 20216830, 36, c.nnz_spread, c.zipf}; break;
    case SyntheticKind::criteo_like: s = {45840617, 1000000, 39, c.nnz_spread, c.zipf}; break;
    default: break;
  }
  if (c.rows > 0) s.rows = c.rows;
  if (c.features > 0) s.features = c.features;
  if (c.nnz_per_row > 0) s.nnz_per_row = c.nnz_per_row;
  return s;
}

SparseRowGenerator::SparseRowGenerator(std::uint64_t seed, const SparseShape& shape, Loss loss,
                                       double noise)
    : shape_(shape), dense_(seed, value_shape(shape, loss), noise), seed_(seed) {
  // A stride near d/φ coprime with d: consecutive frequency ranks land far apart.
  const std::int64_t d = shape.features;
  stride_ = std::max<std::int64_t>(1, std::int64_t(double(d) * 0.6180339887498949));
  while (std::gcd(stride_, d) != 1) ++stride_;
}

void SparseRowGenerator::columns(std::int64_t r, std::vector<std::int64_t>& cols) const {
  const std::int64_t d = shape_.features;
  std::uint64_t h = mix(key(r) ^ 0x2545F4914F6CDD1Dull);
  const double want = shape_.nnz_per_row * (1.0 + shape_.spread * (2.0 * unit(h) - 1.0));
  const std::int64_t n = std::clamp<std::int64_t>(std::llround(want), 1, d);
  // Inverse transform of the continuous density ∝ (x + 1)^-zipf on [0, d).
  const double a = 1.0 - shape_.zipf, L = std::log(double(d) + 1.0);
  const double span = std::abs(a) < 1e-9 ? L : std::expm1(a * L) / a;
  cols.clear();
  for (std::int64_t k = 0; k < n; ++k) {
    h = mix(h + kGolden);
    const double u = unit(h);
    const double x = std::abs(a) < 1e-9 ? std::exp(u * L) : std::exp(std::log1p(a * u * span) / a);
    const std::int64_t rank = std::clamp<std::int64_t>(std::int64_t(x - 1.0), 0, d - 1);
    cols.push_back((rank * stride_ + 1) % d);  // both below 2^31: no overflow
  }
  std::sort(cols.begin(), cols.end());
  cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
}

std::int64_t SparseRowGenerator::margin_term(std::uint64_t key, std::int64_t col) const {
  if (!planted(seed_, col)) return 0;
  return std::int64_t(SyntheticGenerator::level(key, col)) * dense_.true_weight(col);
}

template <class T>
Dataset<T> generate_sparse(const Config& c, comm::Communicator& comm) {
  const SparseShape shape = sparse_shape(c.data.synthetic);
  if (shape.features > (std::int64_t(1) << 31) - 2)
    throw InputError("data.synthetic.features: at most 2^31 - 2 (column indices are 32-bit)");
  const SparseRowGenerator gen(c.run.seed, shape, c.model.loss, c.data.synthetic.noise);
  const std::int64_t d = shape.features, cols = d + (c.model.intercept ? 1 : 0);
  Dataset<T> ds;
  ds.part = make_partition(c, shape.rows, cols, comm.rank(), comm.size(), true);
  check_partition(c, ds.part);
  ds.features = d;
  const Partition& p = ds.part;
  const std::int64_t m = p.local_rows(), c0 = p.col_begin(), c1 = p.col_end();
  const bool one = c.model.intercept && d >= c0 && d < c1;

  // Pass 1: each local row's entries in this rank's columns (rows are i.i.d.: position q is
  // row q, no shuffle).
  std::vector<std::int64_t> counts(static_cast<std::size_t>(m)), row;
  std::int64_t nnz = 0;
  for (std::int64_t l = 0; l < m; ++l) {
    gen.columns(p.position(l), row);
    const auto b = std::lower_bound(row.begin(), row.end(), c0);
    counts[std::size_t(l)] = std::int64_t(std::lower_bound(b, row.end(), c1) - b) + (one ? 1 : 0);
    nnz += counts[std::size_t(l)];
  }
  allocate_sparse_share(ds, counts, "data.synthetic", comm);
  const double total = comm.allreduce_value(
      double(p.decomposition == Decomposition::row ? nnz : (comm.rank() == 0 ? nnz : 0)));
  ds.description = std::string(to_string(c.data.synthetic.kind)) + " (" +
                   std::to_string(shape.rows) + " x " + std::to_string(d) +
                   ", sparse: " + std::to_string(std::int64_t(total)) + " nonzeros)";

  // Pass 2: the entries and the labels (from the whole row's margin, which every rank that
  // holds a part of the row computes alike).
  const auto row_map = Kokkos::create_mirror_view_and_copy(HostSpace(), ds.csr.row_map);
  const auto entries = Kokkos::create_mirror_view(ds.csr.entries);
  const auto values = Kokkos::create_mirror_view(ds.csr.values);
  const auto y = Kokkos::create_mirror_view(ds.y);
  const DataStore<T> store = data_store<T>(c, cols);
  for (std::int64_t l = 0; l < m; ++l) {
    const std::int64_t r = p.position(l);
    const std::uint64_t key = gen.key(r);
    gen.columns(r, row);
    std::int64_t at = row_map(l), margin = 0;
    for (const std::int64_t j : row) {
      margin += gen.margin_term(key, j);
      if (j < c0 || j >= c1) continue;
      entries(at) = std::int32_t(j - c0);
      values(at++) = store(gen.value(key, j), r, j);
    }
    if (one) {
      entries(at) = std::int32_t(d - c0);
      values(at++) = store(1.0, r, d);
    }
    y(l) = gen.label(r, margin);
  }
  Kokkos::deep_copy(ds.csr.entries, entries);
  Kokkos::deep_copy(ds.csr.values, values);
  Kokkos::deep_copy(ds.y, y);
  return ds;
}

template Dataset<float> generate_sparse<float>(const Config&, comm::Communicator&);
template Dataset<double> generate_sparse<double>(const Config&, comm::Communicator&);
template Dataset<precision::bf16> generate_sparse<precision::bf16>(const Config&,
                                                                   comm::Communicator&);
template Dataset<precision::fp16> generate_sparse<precision::fp16>(const Config&,
                                                                   comm::Communicator&);

}  // namespace minisgd
