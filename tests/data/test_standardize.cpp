// data.standardize (run at 1, 2, 3 and 4 ranks): the stored columns have mean 0 and variance 1
// as this test computes them from the file's values, a constant column and the intercept are
// left alone, the test set is transformed with the training set's statistics, and the stored
// matrix and the trained weights do not depend on P or the decomposition.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "minisgd/comm/mpi_communicator.hpp"
#include "minisgd/data/loader.hpp"
#include "support/test_support.hpp"

using namespace minisgd;

namespace {

constexpr int kRows = 203, kFeatures = 6;  // column 4 is constant, column 5 mostly zero

/// Value of (row, column) of the unscaled training (test: shifted) data, 0 where the file
/// leaves it out. Columns of very different means and spreads, one with mean 1e6.
double raw(int i, int j, bool test_set) {
  const double u = std::sin(1.3 * i + 0.7 * j * j + (test_set ? 0.4 : 0.0));
  switch (j) {
    case 0: return 1e6 + 3.0 * u;
    case 1: return 0.01 * u;
    case 2: return 250.0 + 40.0 * u * u;
    case 3: return i % 3 == 0 ? 0.0 : -7.0 + u;
    case 4: return 2.5;
    default: return i % 5 == 0 ? 4.0 * u : 0.0;
  }
}

std::string write_file(bool test_set) {
  const std::string path = ::testing::TempDir() + "minisgd_standardize_" +
                           (test_set ? "test" : "train") + std::to_string(test::world_size());
  if (test::world_rank() == 0) {
    std::ofstream out(path);
    out.precision(17);
    for (int i = 0; i < kRows; ++i) {
      out << (i % 2 ? 1 : -1);
      for (int j = 0; j < kFeatures; ++j)
        if (raw(i, j, test_set) != 0.0) out << ' ' << j + 1 << ':' << raw(i, j, test_set);
      out << '\n';
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

struct Moments {
  double mean, sd;
};

/// Mean and standard deviation of column j over the training rows (zeros included), two-pass.
Moments moments(int j) {
  double s = 0, q = 0;
  for (int i = 0; i < kRows; ++i) s += raw(i, j, false);
  const double mean = s / kRows;
  for (int i = 0; i < kRows; ++i) q += (raw(i, j, false) - mean) * (raw(i, j, false) - mean);
  return {mean, std::sqrt(q / kRows)};
}

Config standardize_deck(const std::string& mode, const std::string& decomposition,
                        const std::string& preset = "fp64", bool shuffle = false) {
  return test::deck(
      "data: {source: libsvm, path: " + write_file(false) + ", test_path: " + write_file(true) +
      ", cache: false, shuffle: " + (shuffle ? "true" : "false") + ", standardize: " + mode +
      "}\nmodel: {loss: logistic, intercept: true}\nsolver: {decomposition: " + decomposition +
      ", batch_size: 16}\nprecision: {preset: " + preset + "}\n");
}

/// The whole stored matrix (shuffled position × column, intercept last) on every rank of
/// `where`.
template <class T>
std::vector<double> whole(const Dataset<T>& ds, MPI_Comm where) {
  const Partition& p = ds.part;
  const auto X = Kokkos::create_mirror_view_and_copy(HostSpace(), ds.X);
  std::vector<double> m(std::size_t(p.rows * p.cols), 0.0);
  for (std::int64_t l = 0; l < p.local_rows(); ++l)
    for (std::int64_t j = 0; j < p.local_cols(); ++j)
      m[std::size_t(p.position(l) * p.cols + p.col_begin() + j)] = double(X(l, j));
  MPI_Allreduce(MPI_IN_PLACE, m.data(), int(m.size()), MPI_DOUBLE, MPI_SUM, where);
  return m;
}

struct Loaded {
  std::vector<double> train, test;
};

template <class T>
Loaded load(const Config& c, MPI_Comm where = MPI_COMM_WORLD) {
  comm::MpiCommunicator comm(where);
  LoadStats stats;
  const Dataset<T> train = load_training_data<T>(c, comm, stats);
  const Dataset<T> test = load_test_data<T>(c, comm, train, stats);
  return {whole(train, where), whole(test, where)};
}

/// Largest |a − b| / max(1, |b|) over the whole matrix.
double worst(const std::vector<double>& a, const std::vector<double>& b) {
  double w = 0;
  for (std::size_t k = 0; k < a.size(); ++k)
    w = std::fmax(w, std::fabs(a[k] - b[k]) / std::fmax(1.0, std::fabs(b[k])));
  return w;
}

}  // namespace

TEST(Standardize, ColumnsHaveMeanZeroAndVarianceOneAndTheTestSetUsesTrainingStatistics) {
  const int cols = kFeatures + 1;
  for (const char* dec : {"row", "column"}) {
    SCOPED_TRACE(dec);
    const Loaded d = load<double>(standardize_deck("standard", dec));
    for (int j = 0; j < cols; ++j) {
      double s = 0, q = 0;
      for (int i = 0; i < kRows; ++i) s += d.train[std::size_t(i * cols + j)];
      for (int i = 0; i < kRows; ++i)
        q += std::pow(d.train[std::size_t(i * cols + j)] - s / kRows, 2);
      if (j == 4 || j == kFeatures) {  // constant column and intercept: untouched
        EXPECT_EQ(d.train[std::size_t(j)], j == 4 ? 2.5 : 1.0);
        EXPECT_EQ(q, 0.0);
        continue;
      }
      // μ carries an error of about an ulp of |μ|, which shifts the standardized values by
      // about eps·|μ|/σ: the best FP64 can do for a column with mean 1e6 and σ ≈ 2.
      const Moments m = moments(j);
      const double tol = 4 * 2.2e-16 * std::fabs(m.mean) / m.sd + 1e-13;
      EXPECT_NEAR(s / kRows, 0.0, tol) << "column " << j;
      EXPECT_NEAR(q / kRows, 1.0, 1e-12) << "column " << j;
      for (int i = 0; i < kRows; ++i) {  // unshuffled: position i is row i
        EXPECT_NEAR(d.train[std::size_t(i * cols + j)], (raw(i, j, false) - m.mean) / m.sd, 1e-9);
        EXPECT_NEAR(d.test[std::size_t(i * cols + j)], (raw(i, j, true) - m.mean) / m.sd, 1e-9);
      }
    }
  }
}

// scale divides by σ only: a zero of the file stays zero, the variance is 1.
TEST(Standardize, ScaleKeepsZeros) {
  const int cols = kFeatures + 1;
  const Loaded d = load<double>(standardize_deck("scale", "row"));
  for (int j : {0, 3, 5}) {
    const Moments m = moments(j);
    for (int i = 0; i < kRows; ++i) {
      const double x = d.train[std::size_t(i * cols + j)];
      EXPECT_NEAR(x, raw(i, j, false) / m.sd, 1e-9 * std::fabs(raw(i, j, false) / m.sd) + 1e-12);
      if (raw(i, j, false) == 0.0) {
        EXPECT_EQ(x, 0.0);
      }
    }
  }
}

// The stored matrix of P ranks equals one rank's bit for bit (shuffled, both decompositions,
// fp64 and fp32 storage).
TEST(Standardize, StoredMatrixDoesNotDependOnRanksOrDecomposition) {
  for (const char* preset : {"fp64", "fp32"}) {
    SCOPED_TRACE(preset);
    const Config row = standardize_deck("standard", "row", preset, true);
    const Config col = standardize_deck("standard", "column", preset, true);
    const bool fp64 = std::string(preset) == "fp64";
    const Loaded one = fp64 ? load<double>(row, MPI_COMM_SELF) : load<float>(row, MPI_COMM_SELF);
    const Loaded r = fp64 ? load<double>(row) : load<float>(row);
    const Loaded c = fp64 ? load<double>(col) : load<float>(col);
    // The statistics are the same doubles at every P (double-double sums): bitwise equal.
    EXPECT_EQ(worst(r.train, one.train), 0.0);
    EXPECT_EQ(worst(c.train, one.train), 0.0);
    EXPECT_EQ(worst(r.test, one.test), 0.0);
    EXPECT_EQ(worst(c.test, one.test), 0.0);
  }
}

// Trained on standardized data, every loss gives the weights of one rank (FP64), in both
// decompositions and with CA-SGD, which still equals SGD.
TEST(Standardize, TrainedWeightsDoNotDependOnRanksForEveryLoss) {
  for (const char* kind : {"synth", "linear-synth", "poisson-synth"}) {
    SCOPED_TRACE(kind);
    const std::string yaml =
        std::string("run: {seed: 5}\ndata: {source: synthetic, standardize: standard, ") +
        "synthetic: {kind: " + kind +
        ", rows: 600, features: 9}}\n"
        "model: {loss: " +
        (std::string(kind) == "synth" ? "logistic"
                                      : std::string(kind).substr(0, std::string(kind).find('-'))) +
        ", l2: 1.0e-3, intercept: true}\nsolver: {batch_size: 20, epochs: 2, step_size: 0.05}\n"
        "precision: {preset: fp64}\n";
    const RunOutcome one = test::run_quiet(test::deck(yaml), MPI_COMM_SELF);
    for (const char* over :
         {"solver.decomposition=row", "solver.decomposition=column", "solver.method=ca-sgd"}) {
      SCOPED_TRACE(over);
      std::vector<std::string> o{over};
      if (std::string(over) == "solver.method=ca-sgd") o.push_back("solver.s=4");
      const RunOutcome all = test::run_quiet(test::deck(yaml, o));
      EXPECT_LT(test::relative_difference(all.weights, one.weights), 1e-12);
    }
  }
}
