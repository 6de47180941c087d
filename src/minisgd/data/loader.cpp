#include "minisgd/data/loader.hpp"

#include <filesystem>
#include <string>

#include "minisgd/core/errors.hpp"
#include "minisgd/data/raw_data.hpp"
#include "minisgd/data/synthetic.hpp"
#include "minisgd/precision/plan.hpp"

namespace minisgd {
namespace {

/// Rounds a value of the data to precision.data (stochastic rounding keyed by its global row
/// and column, so the stored matrix does not depend on P) and stores it as T, the format's
/// container.
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

Partition make_partition(const Config& c, std::int64_t rows, std::int64_t cols, int rank,
                         int ranks, bool training) {
  Partition p{c.solver.decomposition, rank, ranks, rows, cols};
  if (!training) return p;
  const std::int64_t b = c.solver.batch_size;
  const std::string P = std::to_string(ranks);
  if (b > rows)
    throw InputError("solver.batch_size: " + std::to_string(b) + " exceeds the " +
                     std::to_string(rows) + " training rows");
  if (p.decomposition == Decomposition::row && b % ranks != 0)
    throw InputError("solver.batch_size: " + std::to_string(b) + " is not divisible by " + P +
                     " ranks (the row decomposition splits every batch evenly)");
  if (p.decomposition == Decomposition::column && cols < ranks)
    throw InputError("solver.decomposition: column needs at least one column per rank (" +
                     std::to_string(cols) + " columns, " + P + " ranks)");
  return p;
}

/// Logistic labels must be ±1 (0/1 are mapped); Poisson labels are counts ≥ 0.
double checked_label(const Config& c, double y, const std::string& where) {
  switch (c.model.loss) {
    case Loss::logistic:
      if (y == 1.0) return 1.0;
      if (y == -1.0 || y == 0.0) return -1.0;
      throw InputError(where + ": logistic labels must be ±1 or 0/1, got " + std::to_string(y));
    case Loss::poisson:
      if (!(y >= 0.0)) throw InputError(where + ": Poisson labels must be ≥ 0, got " + std::to_string(y));
      return y;
    case Loss::linear: return y;
  }
  return y;
}

RawData read_file(const Config& c, const std::string& path, int rank) {
  if (!std::filesystem::exists(path)) throw InputError(path + ": data file not found");
  if (c.data.source == "binary") return read_binary(path);
  const std::string cache = path + ".minisgd.bin";
  if (c.data.cache && binary_is_fresh(cache, path)) {
    RawData d = read_binary(cache);
    if (c.data.features == 0 || c.data.features == d.cols) return d;
  }
  RawData d = read_libsvm(path, c.data.features);
  // One writer; a cache that cannot be written (read-only data directory) is not an error.
  if (c.data.cache && rank == 0) {
    try { write_binary(cache, d); } catch (const RuntimeFailure&) {}
  }
  return d;
}

template <class T>
Dataset<T> from_raw(const Config& c, const RawData& raw, const std::string& path, int rank,
                    int ranks, bool training, std::int64_t features) {
  const std::int64_t d = features > 0 ? features : raw.cols;
  if (raw.cols > d)
    throw InputError(path + ": has " + std::to_string(raw.cols) + " features, the model " +
                     std::to_string(d));
  const std::int64_t cols = d + (c.model.intercept ? 1 : 0);
  Dataset<T> ds;
  ds.part = make_partition(c, raw.rows, cols, rank, ranks, training);
  ds.features = d;
  ds.description = path + " (" + std::to_string(raw.rows) + " x " + std::to_string(d) + ")";
  const Partition& p = ds.part;
  ds.X = Matrix<T>("X", p.local_rows(), p.local_cols());
  ds.y = Vector<double>("y", p.local_rows());
  auto hX = Kokkos::create_mirror_view(ds.X);
  auto hy = Kokkos::create_mirror_view(ds.y);
  Kokkos::deep_copy(hX, T{});
  const DataStore<T> store = data_store<T>(c, cols);
  const auto order = shuffled_order(raw.rows, c.run.seed, training && c.data.shuffle);
  const std::int64_t c0 = p.col_begin(), c1 = p.col_end();
  for (std::int64_t q = 0; q < raw.rows; ++q) {
    const std::int64_t l = p.local_index(q);
    if (l < 0) continue;
    const std::int64_t r = order[q];
    const std::string where = raw.line[r] > 0 ? path + ":" + std::to_string(raw.line[r]) : path;
    hy(l) = checked_label(c, raw.labels[r], where);
    for (std::int64_t k = raw.row_ptr[r]; k < raw.row_ptr[r + 1]; ++k)
      if (raw.col[k] >= c0 && raw.col[k] < c1) hX(l, raw.col[k] - c0) = store(raw.val[k], r, raw.col[k]);
    if (c.model.intercept && d >= c0 && d < c1) hX(l, d - c0) = store(1.0, r, d);
  }
  Kokkos::deep_copy(ds.X, hX);
  Kokkos::deep_copy(ds.y, hy);
  return ds;
}

template <class T>
Dataset<T> generate(const Config& c, int rank, int ranks) {
  const SyntheticShape shape = synthetic_shape(c.data.synthetic);
  // Labels are drawn for one loss; another loss may only reuse them where they are valid.
  if (c.model.loss != shape.loss && c.model.loss != Loss::linear)
    throw InputError("data.synthetic.kind: " + c.data.synthetic.kind + " draws labels for " +
                     to_string(shape.loss) + " regression, not for model.loss " +
                     to_string(c.model.loss));
  const SyntheticGenerator gen(c.run.seed, shape, c.data.synthetic.noise);
  const std::int64_t d = shape.features;
  const std::int64_t cols = d + (c.model.intercept ? 1 : 0);
  Dataset<T> ds;
  ds.part = make_partition(c, shape.rows, cols, rank, ranks, true);
  ds.features = d;
  ds.description = c.data.synthetic.kind + " (" + std::to_string(shape.rows) + " x " +
                   std::to_string(d) + ")";
  const Partition p = ds.part;
  const auto order_host = shuffled_order(shape.rows, c.run.seed, c.data.shuffle);
  Kokkos::View<std::int64_t*, MemSpace> order("order", shape.rows);
  Kokkos::deep_copy(order, Kokkos::View<const std::int64_t*, HostSpace,
                                        Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                               order_host.data(), order_host.size()));
  ds.X = Matrix<T>("X", p.local_rows(), p.local_cols());
  ds.y = Vector<double>("y", p.local_rows());
  auto X = ds.X;
  auto y = ds.y;
  const std::int64_t c0 = p.col_begin();
  const bool intercept = c.model.intercept;
  const DataStore<T> store = data_store<T>(c, cols);
  // Local row l is shuffled position q = l·P + rank (row) or l (column).
  const std::int64_t stride = p.decomposition == Decomposition::row ? ranks : 1;
  const std::int64_t offset = p.decomposition == Decomposition::row ? rank : 0;
  Kokkos::parallel_for(
      "minisgd::generate", Kokkos::RangePolicy<ExecSpace>(0, p.local_rows()),
      KOKKOS_LAMBDA(const std::int64_t l) {
        const std::int64_t r = order(l * stride + offset);
        y(l) = gen.label(r);
        for (std::int64_t j = 0; j < std::int64_t(X.extent(1)); ++j) {
          const std::int64_t g = c0 + j;
          X(l, j) = store(g < d ? gen.feature(r, g) : intercept ? 1.0 : 0.0, r, g);
        }
      });
  fence("data loaded");
  return ds;
}

}  // namespace

SyntheticShape synthetic_shape(const SyntheticConfig& c) {
  SyntheticShape s{100000, 256, Loss::logistic, 1.0, 2.0};
  if (c.kind == "linear-synth") s = {100000, 256, Loss::linear, 1.0, 1.0};
  if (c.kind == "poisson-synth") s = {100000, 256, Loss::poisson, 1.0, 0.5};
  if (c.kind == "epsilon-like") s = {400000, 2000, Loss::logistic, 1.0 / std::sqrt(2000.0), 2.0};
  if (c.kind == "susy-like") s = {5000000, 18, Loss::logistic, 1.0, 2.0};
  if (c.kind == "higgs-like") s = {11000000, 28, Loss::logistic, 1.0, 2.0};
  if (c.rows > 0) s.rows = c.rows;
  if (c.features > 0) {
    if (c.kind == "epsilon-like") s.feature_scale = 1.0 / std::sqrt(double(c.features));
    s.features = c.features;
  }
  return s;
}

template <class T>
Dataset<T> load_training_data(const Config& c, int rank, int ranks) {
  if (c.data.source == "synthetic") return generate<T>(c, rank, ranks);
  if (c.data.fallback == "stand-in" && !std::filesystem::exists(c.data.path)) {
    Dataset<T> stand_in = generate<T>(c, rank, ranks);
    stand_in.description += ", a stand-in: " + c.data.path + " not found";
    return stand_in;
  }
  const RawData raw = read_file(c, c.data.path, rank);
  return from_raw<T>(c, raw, c.data.path, rank, ranks, true, c.data.features);
}

template <class T>
Dataset<T> load_test_data(const Config& c, int rank, int ranks, std::int64_t features) {
  Config test = c;
  test.data.cache = false;
  const RawData raw = read_file(test, c.data.test_path, rank);
  return from_raw<T>(c, raw, c.data.test_path, rank, ranks, false, features);
}

template Dataset<float> load_training_data<float>(const Config&, int, int);
template Dataset<double> load_training_data<double>(const Config&, int, int);
template Dataset<precision::bf16> load_training_data<precision::bf16>(const Config&, int, int);
template Dataset<precision::fp16> load_training_data<precision::fp16>(const Config&, int, int);
template Dataset<float> load_test_data<float>(const Config&, int, int, std::int64_t);
template Dataset<double> load_test_data<double>(const Config&, int, int, std::int64_t);
template Dataset<precision::bf16> load_test_data<precision::bf16>(const Config&, int, int,
                                                                  std::int64_t);
template Dataset<precision::fp16> load_test_data<precision::fp16>(const Config&, int, int,
                                                                  std::int64_t);

}  // namespace minisgd
