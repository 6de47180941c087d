// Sparse storage (data.layout: sparse) under MPI (run at 1-4 ranks): the same FP64 weights as
// dense storage of the same file for every loss, decomposition and optimizer, CA-SGD on sparse
// shares equal to SGD, weights that do not depend on P, the synthetic sparse kinds, and
// malformed sparse input named by file:line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "minisgd/comm/mpi_communicator.hpp"
#include "minisgd/core/errors.hpp"
#include "minisgd/data/binary_io.hpp"
#include "minisgd/data/feature_hash.hpp"
#include "minisgd/data/loader.hpp"
#include "minisgd/data/text_loader.hpp"
#include "support/test_support.hpp"

using namespace minisgd;
using test::deck;
using test::run_quiet;

namespace {

std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
double uniform(std::uint64_t h) { return (double(h >> 11) + 0.5) / 9007199254740992.0; }

/// A LIBSVM file of `rows` rows over `features` features, about 8 nonzeros a row, with labels
/// of `loss` (written by rank 0; every rank returns its path after a barrier).
std::string sparse_file(const std::string& loss, std::int64_t rows = 300,
                        std::int64_t features = 400) {
  const std::string path = ::testing::TempDir() + "sparse_" + loss + ".libsvm";
  if (test::world_rank() == 0) {
    std::ofstream out(path);
    out.precision(17);
    for (std::int64_t r = 0; r < rows; ++r) {
      std::uint64_t h = mix(std::uint64_t(r) + 1);
      std::string entries;
      double z = 0;
      for (std::int64_t j = std::int64_t(h % 7); j < features; j += 1 + std::int64_t(h % 97)) {
        h = mix(h);
        const double v = 2 * uniform(h) - 1;
        z += v * std::sin(double(j));
        entries += " " + std::to_string(j + 1) + ":" + std::to_string(v);
      }
      double y = z + 0.1 * (uniform(mix(h)) - 0.5);
      if (loss == "logistic") y = uniform(mix(h + 1)) < 1 / (1 + std::exp(-2 * z)) ? 1 : -1;
      if (loss == "poisson") y = std::floor(std::exp(0.3 * z) * 2 * uniform(mix(h + 2)));
      out << y << entries << "\n";
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

std::string file_deck(const std::string& path, const std::string& loss, const std::string& layout,
                      const std::string& solver) {
  return "run: {seed: 3}\n"
         "data: {source: libsvm, path: " +
         path + ", layout: " + layout +
         ", cache: false}\n"
         "model: {loss: " +
         loss +
         ", l2: 1.0e-3, intercept: true}\n"
         "solver: {batch_size: 12, epochs: 2, reshuffle: true, " +
         solver +
         "}\n"
         "precision: {preset: fp64}\n";
}

}  // namespace

// The same file stored dense and sparse trains to the same FP64 weights: the margins are the
// same sums, the gradients the same terms added in another grouping.
TEST(Sparse, SameWeightsAsDenseStorage) {
  const char* solvers[] = {
      "decomposition: row, step_size: {eta0: 0.05, schedule: inverse_time, decay: 0.01}",
      "decomposition: column, step_size: {eta0: 0.05, schedule: inverse_time, decay: 0.01}",
      "decomposition: row, optimizer: momentum, step_size: 0.02",
      "decomposition: row, optimizer: adam, step_size: 0.01",
      "decomposition: column, averaging: polyak, step_size: 0.05"};
  for (const char* loss : {"logistic", "linear", "poisson"}) {
    const std::string path = sparse_file(loss);
    for (const char* solver : solvers) {
      SCOPED_TRACE(std::string(loss) + ", " + solver);
      const RunOutcome dense = run_quiet(deck(file_deck(path, loss, "dense", solver)));
      const RunOutcome sparse = run_quiet(deck(file_deck(path, loss, "sparse", solver)));
      ASSERT_EQ(dense.weights.size(), 401u);
      EXPECT_LT(test::relative_difference(sparse.weights, dense.weights), 1e-12);
      EXPECT_NEAR(sparse.result.final_loss, dense.result.final_loss,
                  1e-12 * std::fabs(dense.result.final_loss));
      EXPECT_LT(sparse.result.final_loss, sparse.result.initial_loss);
    }
  }
}

// auto stores this file (2% dense) sparse, and says so in the report's problem.
TEST(Sparse, AutoChoosesSparseForSparseData) {
  const std::string path = sparse_file("logistic");
  const RunOutcome a = run_quiet(deck(file_deck(path, "logistic", "auto", "step_size: 0.05")));
  const RunOutcome d = run_quiet(deck(file_deck(path, "logistic", "dense", "step_size: 0.05")));
  EXPECT_NE(a.report.dump().find("sparse:"), std::string::npos);
  EXPECT_EQ(d.report.dump().find("sparse:"), std::string::npos);
  EXPECT_EQ(a.report["problem"]["layout"], "sparse");
  EXPECT_EQ(d.report["problem"]["layout"], "dense");
  EXPECT_FALSE(d.report["problem"].contains("nonzeros"));
  // The file's values and the intercept's 1 in each row, the same count at every P.
  std::int64_t nnz = a.report["problem"]["rows"].get<std::int64_t>();
  for (std::ifstream in(path); in;) {
    std::string line;
    std::getline(in, line);
    nnz += std::count(line.begin(), line.end(), ':');
  }
  EXPECT_EQ(a.report["problem"]["nonzeros"].get<std::int64_t>(), nnz);
}

TEST(Sparse, WeightsDoNotDependOnRankCount) {
  for (const char* dec : {"row", "column"}) {
    SCOPED_TRACE(dec);
    const Config c = deck(
        "run: {seed: 9}\n"
        "data: {source: synthetic, synthetic: {kind: sparse, rows: 600, features: 5000, "
        "nnz_per_row: 20, zipf: 1.1}}\n"
        "model: {loss: logistic, l2: 1.0e-4}\n"
        "solver: {decomposition: " +
        std::string(dec) +
        ", batch_size: 16, epochs: 2, "
        "step_size: 0.5}\nprecision: {preset: fp64}\n");
    const RunOutcome all = run_quiet(c, MPI_COMM_WORLD);
    const RunOutcome one = run_quiet(c, MPI_COMM_SELF);
    EXPECT_LT(test::relative_difference(all.weights, one.weights), 1e-10);
    EXPECT_LT(all.result.final_loss, all.result.initial_loss);
  }
}

// compression.method: sparse is an exact AllReduce of the touched coordinates: at every P (the
// test runs at 1-4 ranks) and for every loss, the weights of compression none within rounding.
TEST(Sparse, ExactSparseCompressionMatchesNone) {
  for (const char* loss : {"logistic", "linear", "poisson"}) {
    SCOPED_TRACE(loss);
    const std::string yaml =
        "run: {seed: 5}\n"
        "data: {source: synthetic, layout: sparse, synthetic: {kind: sparse, rows: 600, "
        "features: 5000, nnz_per_row: 20, zipf: 1.1}}\n"
        "model: {loss: " +
        std::string(loss) +
        ", l2: 1.0e-4}\n"
        "solver: {batch_size: 16, epochs: 2, step_size: 0.2}\nprecision: {preset: fp64}\n";
    const RunOutcome none = run_quiet(deck(yaml, {"compression.method=none"}), MPI_COMM_WORLD);
    const RunOutcome sparse = run_quiet(deck(yaml, {"compression.method=sparse"}), MPI_COMM_WORLD);
    EXPECT_LT(test::relative_difference(sparse.weights, none.weights), 1e-12);
    EXPECT_LT(sparse.result.final_loss, sparse.result.initial_loss);
  }
}

// Top-k and gTop-k on a sparse share select on the touched columns and the residual's support
// (docs/compression.md, "On the gradient's support"); on dense storage of the same file they
// scan all d. The same FP64 weights to rounding, at every P.
TEST(Sparse, TopKAndGTopKTrainAsOnDenseStorage) {
  const std::string path = sparse_file("logistic");
  for (const char* method : {"topk", "gtopk"}) {
    SCOPED_TRACE(method);
    const std::vector<std::string> over = {std::string("compression.method=") + method,
                                           "compression." + std::string(method) + ".density=0.02"};
    const std::string solver = "decomposition: row, step_size: 0.05";
    const RunOutcome dense = run_quiet(deck(file_deck(path, "logistic", "dense", solver), over));
    const RunOutcome sparse = run_quiet(deck(file_deck(path, "logistic", "sparse", solver), over));
    EXPECT_EQ(sparse.report["compression"]["method"], method);
    EXPECT_LT(test::relative_difference(sparse.weights, dense.weights), 1e-12);
    EXPECT_LT(sparse.result.final_loss, sparse.result.initial_loss);
  }
}

TEST(Sparse, ExactSparseCompressionRefusals) {
  EXPECT_TRUE(
      test::refused("data: {layout: sparse, synthetic: {kind: sparse}}\n"
                    "solver: {decomposition: column}\ncompression: {method: sparse}\n",
                    "solver.decomposition is column"));
  EXPECT_TRUE(test::refused(
      "data: {layout: dense, synthetic: {kind: synth}}\ncompression: {method: sparse}\n",
      "data.layout is dense"));
}

// Every loss learns from its planted sparse w*, in every storage precision.
TEST(Sparse, SyntheticKindsTrainEveryLoss) {
  for (const char* loss : {"logistic", "linear", "poisson"}) {
    for (const char* data : {"fp64", "fp32", "bf16", "fp16"}) {
      SCOPED_TRACE(std::string(loss) + " " + data);
      const RunOutcome r =
          run_quiet(deck("data: {source: synthetic, synthetic: {kind: rcv1-like, rows: 2000}}\n"
                         "model: {loss: " +
                             std::string(loss) +
                             "}\n"
                             "solver: {batch_size: 32, epochs: 2, step_size: 0.5}\n"
                             "precision: {preset: " +
                             std::string(data[2] == '6' ? "fp64" : "fp32") + "}\n",
                         {std::string("precision.data=") + data}));
      ASSERT_EQ(r.weights.size(), 47236u);
      EXPECT_LT(r.result.final_loss, r.result.initial_loss);
    }
  }
}

TEST(Sparse, MalformedInputNamesFileAndLine) {
  const std::string path = ::testing::TempDir() + "sparse_bad.libsvm";
  const char* bad[][2] = {{"1 3:1 3:2", "strictly increasing"},
                          {"1 4:1 2:2", "strictly increasing"},
                          {"1 2:1 9:1", "exceeds data.features"},
                          {"1 0:1", "< 1"}};
  for (const auto& b : bad) {
    SCOPED_TRACE(b[0]);
    if (test::world_rank() == 0) std::ofstream(path) << "1 1:1 2:1\n-1 2:0.5\n" << b[0] << "\n";
    MPI_Barrier(MPI_COMM_WORLD);
    std::string got = "no error";
    try {
      comm::MpiCommunicator world(MPI_COMM_WORLD);
      LoadStats stats;
      load_training_data<double>(deck("data: {source: libsvm, path: " + path +
                                      ", layout: sparse, features: 8, cache: false}\n"
                                      "solver: {batch_size: 1}\n"),
                                 world, stats);
    } catch (const InputError& e) {
      got = e.what();
    }
    EXPECT_NE(got.find(path + ":3: "), std::string::npos) << got;
    EXPECT_NE(got.find(b[1]), std::string::npos) << got;
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

TEST(Sparse, DeckRefusesWhatSparseStorageCannotDo) {
  EXPECT_TRUE(
      test::refused("data: {layout: sparse, synthetic: {kind: synth}}\n", "generates dense rows"));
  EXPECT_TRUE(
      test::refused("data: {layout: dense, synthetic: {kind: url-like}}\n", "generated sparse"));
  EXPECT_TRUE(
      test::refused("data: {layout: sparse, standardize: scale, synthetic: {kind: sparse}}\n",
                    "data.standardize"));
}

// Hashing maps each index to a column and a sign, sorts each row and adds colliding features.
TEST(Sparse, HashedRowsAreSortedWithCollisionsAdded) {
  ParsedRows rows;
  const std::string line = "1 1:1 2:2 3:3 4:4 5:5 6:6 7:7 8:8 9:9 10:10";
  ASSERT_EQ(parse_libsvm_line(line.data(), line.data() + line.size(), 0, 1, rows), "");
  hash_rows(rows, 0, 2);  // ten features into four columns: collisions certain
  double expect[4] = {0, 0, 0, 0};
  for (int i = 0; i < 10; ++i) {
    const HashedFeature f = hash_feature(i, 2);
    ASSERT_GE(f.col, 0);
    ASSERT_LT(f.col, 4);
    expect[f.col] += f.sign * (i + 1);
  }
  ASSERT_EQ(rows.rows(), 1);
  ASSERT_LE(rows.col.size(), 4u);
  for (std::size_t k = 0; k < rows.col.size(); ++k) {
    if (k > 0) {
      EXPECT_LT(rows.col[k - 1], rows.col[k]);
    }
    EXPECT_EQ(rows.val[k], expect[rows.col[k]]);
  }
  EXPECT_EQ(hash_feature(123456789, 20).col, hash_feature(123456789, 20).col);
}

// data.hash_bits: indices of any size train in 2^B columns, dense and sparse alike.
TEST(Sparse, HashedFileTrainsTheSameDenseAndSparse) {
  const std::string path = ::testing::TempDir() + "sparse_hashed.libsvm";
  if (test::world_rank() == 0) {
    std::ofstream out(path);
    for (int r = 0; r < 200; ++r) {
      std::uint64_t h = mix(std::uint64_t(r) + 7);
      out << ((h & 1) ? "+1" : "-1");
      for (std::uint64_t j = 1 + h % 1000; j < 4000000000ull; j += 1 + (h = mix(h)) % 400000000)
        out << " " << j << ":" << double(1 + (h >> 60)) * ((h & 1) ? 1 : -1) * (1 + r % 3);
      out << "\n";
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (const char* dec : {"row", "column"}) {
    SCOPED_TRACE(dec);
    const auto yaml = [&](const char* layout) {
      return "data: {source: libsvm, path: " + path + ", hash_bits: 10, layout: " + layout +
             ", cache: false}\nmodel: {l2: 1.0e-3}\nprecision: {preset: fp64}\n"
             "solver: {batch_size: 8, epochs: 2, step_size: 0.05, decomposition: " +
             dec + "}\n";
    };
    const RunOutcome dense = run_quiet(deck(yaml("dense")));
    const RunOutcome sparse = run_quiet(deck(yaml("sparse")));
    ASSERT_EQ(dense.weights.size(), 1024u);
    EXPECT_LT(test::relative_difference(sparse.weights, dense.weights), 1e-12);
    EXPECT_LT(sparse.result.final_loss, sparse.result.initial_loss);
  }
  EXPECT_TRUE(test::refused("data: {source: libsvm, path: x, hash_bits: 31}\n", "at most 30"));
  EXPECT_TRUE(test::refused("data: {source: libsvm, path: x, hash_bits: 4, features: 10}\n",
                            "2^4 features"));
  EXPECT_TRUE(test::refused("data: {hash_bits: 4}\n", "data.source: libsvm"));
}

// auto chooses CA-SGD's layout by its own density, kCaSgdSparseDensity (1%), under which the
// sparse Gram is the faster on host backends: a 2% file stays dense (SGD's auto stores it
// sparse), a 0.4% one is stored sparse (a device keeps both dense).
TEST(Sparse, AutoChoosesCaSgdLayoutByItsOwnDensity) {
  const std::string two_percent = sparse_file("logistic");
  const std::string under_one = ::testing::TempDir() + "sparse_under_one_percent.libsvm";
  if (test::world_rank() == 0) {
    std::ofstream out(under_one);
    for (int r = 0; r < 90; ++r)  // three columns of 759 a row, increasing
      out << (r % 3 ? 1 : -1) << " " << 1 + r << ":0.5 " << 300 + 3 * r << ":-1 " << 670 + r
          << ":0.25\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const char* ca = "method: ca-sgd, s: 4, step_size: 0.05";
  const RunOutcome dense = run_quiet(deck(file_deck(two_percent, "logistic", "auto", ca)));
  const RunOutcome sparse = run_quiet(deck(file_deck(under_one, "logistic", "auto", ca)));
  EXPECT_EQ(dense.report["problem"]["layout"], "dense");
  EXPECT_EQ(sparse.report["problem"]["layout"], kHostMemory ? "sparse" : "dense");
  EXPECT_LT(sparse.result.final_loss, sparse.result.initial_loss);
}

// A sparse binary file (minisgd-convert --layout sparse) and the cache next to the text train to
// the text's weights: sparse storage in both decompositions, and dense storage (CA-SGD) from
// the same CSR cache. The cache of data that auto stores sparse is CSR.
TEST(Sparse, BinaryFileAndCacheTrainLikeTheText) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const std::string path = sparse_file("logistic");
  const std::string bin = ::testing::TempDir() + "sparse_logistic.bin";
  const std::string cache = path + ".minisgd.bin";
  const auto with = [](std::string yaml, const std::string& from, const std::string& to) {
    return yaml.replace(yaml.find(from), from.size(), to);
  };
  const char* solvers[] = {"decomposition: row, step_size: 0.05",
                           "decomposition: column, averaging: polyak, step_size: 0.05",
                           "method: ca-sgd, s: 4, step_size: 0.05"};
  for (const char* solver : solvers) {
    SCOPED_TRACE(solver);
    const std::string text = file_deck(path, "logistic", "auto", solver);
    Config c = deck(text);
    c.data.layout = Layout::sparse;
    convert_libsvm<double>(c, path, bin, 0, world);
    ASSERT_EQ(binary_form(InputFile(bin)), BinaryForm::csr);
    const RunOutcome from_text = run_quiet(deck(text));
    const RunOutcome from_bin = run_quiet(
        deck(with(text, "source: libsvm, path: " + path, "source: binary, path: " + bin)));
    EXPECT_EQ(from_bin.report["problem"]["layout"], from_text.report["problem"]["layout"]);
    EXPECT_LT(test::relative_difference(from_bin.weights, from_text.weights), 1e-12);
    // The cache: written by the first run (CSR, also for CA-SGD's dense share), read by the second.
    const std::string cached = with(text, "cache: false", "cache: true");
    if (test::world_rank() == 0) std::remove(cache.c_str());
    MPI_Barrier(MPI_COMM_WORLD);
    const RunOutcome first = run_quiet(deck(cached));
    ASSERT_EQ(binary_form(InputFile(cache)), BinaryForm::csr);
    const RunOutcome second = run_quiet(deck(cached));
    EXPECT_LT(test::relative_difference(first.weights, from_text.weights), 1e-12);
    EXPECT_LT(test::relative_difference(second.weights, from_text.weights), 1e-12);
    EXPECT_FALSE(first.report["data_load"]["parse_MBps_per_rank"].is_null());
    EXPECT_TRUE(second.report["data_load"]["parse_MBps_per_rank"].is_null());  // nothing parsed
  }
}

namespace {

// sparse_file's rows, 71 steps with no evaluation between them (every s > 1 ends with a partial
// outer step), reshuffled batches, an inverse-time schedule, in the column decomposition.
std::string ca_deck(const std::string& path, const std::string& loss, const std::string& layout,
                    const std::string& method, int s, int b, double l2) {
  return "run: {seed: 11}\n"
         "data: {source: libsvm, path: " +
         path + ", layout: " + layout +
         ", cache: false}\n"
         "model: {loss: " +
         loss + ", l2: " + std::to_string(l2) +
         ", intercept: true}\n"
         "solver: {method: " +
         method + ", decomposition: column, batch_size: " + std::to_string(b) +
         ", s: " + std::to_string(s) +
         ",\n"
         "         epochs: 0, max_iters: 71, eval_every: 1000000, reshuffle: true,\n"
         "         step_size: {eta0: " +
         std::string(loss == "logistic" ? "0.2" : "0.05") +
         ", schedule: inverse_time, decay: 0.02}}\n"
         "precision: {preset: fp64}\n";
}

}  // namespace

// CA-SGD on sparse shares (a Gram of merged sparse rows, sparse margins and update) computes
// SGD's iterates: FP64 weights within 1e-12 of SGD on the same sparse share and on dense storage
// of the same file, for every s (70: beyond the launched set-up), b, loss and λ.
TEST(Sparse, CaSgdMatchesSgdForEverySBLossAndL2) {
  double worst = 0;
  for (const char* loss : {"logistic", "linear", "poisson"}) {
    const std::string path = sparse_file(loss);
    for (int b : {1, 8, 32})
      for (double l2 : {0.0, 1e-2}) {
        const RunOutcome sgd = run_quiet(deck(ca_deck(path, loss, "sparse", "sgd", 1, b, l2)));
        const RunOutcome dense = run_quiet(deck(ca_deck(path, loss, "dense", "sgd", 1, b, l2)));
        ASSERT_EQ(sgd.result.iterations, 71);
        ASSERT_EQ(sgd.weights.size(), 401u);
        for (int s : {1, 2, 5, 16, 64, 70}) {
          SCOPED_TRACE(std::string(loss) + " b=" + std::to_string(b) + " s=" + std::to_string(s) +
                       " l2=" + std::to_string(l2));
          const RunOutcome ca = run_quiet(deck(ca_deck(path, loss, "sparse", "ca-sgd", s, b, l2)));
          ASSERT_EQ(ca.result.iterations, 71);
          EXPECT_EQ(ca.report["problem"]["layout"], "sparse");
          EXPECT_EQ(ca.report["kernels"]["gram"], s > 1 ? "sparse" : "none");
          const double d = std::fmax(test::relative_difference(ca.weights, sgd.weights),
                                     test::relative_difference(ca.weights, dense.weights));
          EXPECT_LT(d, 1e-12);
          worst = std::fmax(worst, d);
        }
      }
  }
  if (test::world_rank() == 0)
    std::printf("[ measured ] max relative weight difference sparse CA-SGD vs SGD (fp64): %.3e\n",
                worst);
}

// Iterate averaging rides on the same ℓ′ (one more pass over the outer step's rows): sparse
// CA-SGD's mean equals SGD's step-by-step mean on dense storage.
TEST(Sparse, CaSgdAveragingMatchesSgd) {
  const std::string path = sparse_file("logistic");
  const RunOutcome last =
      run_quiet(deck(ca_deck(path, "logistic", "sparse", "ca-sgd", 16, 8, 1e-2)));
  for (const char* start : {"0", "0.5"}) {  // from the first step; from within an outer step
    SCOPED_TRACE(start);
    const std::vector<std::string> over = {"solver.averaging=polyak",
                                           std::string("solver.averaging_start=") + start};
    const RunOutcome sgd =
        run_quiet(deck(ca_deck(path, "logistic", "dense", "sgd", 1, 8, 1e-2), over));
    const RunOutcome ca =
        run_quiet(deck(ca_deck(path, "logistic", "sparse", "ca-sgd", 16, 8, 1e-2), over));
    EXPECT_LT(test::relative_difference(ca.weights, sgd.weights), 1e-12);
    EXPECT_GT(test::relative_difference(ca.weights, last.weights), 1e-6);  // the mean, not w
  }
}

// The reduced-precision knobs on a sparse share round what dense storage rounds: the Gram
// inputs with the same random bits (keyed by the row's place in the outer step and the column),
// and every emulated accumulator the same chain of additions less its additions of zeros. With
// the portable Gram (each entry one chain in column order) and every accumulation rounded,
// the weights are dense storage's; the presets, whose Gram the library sums and whose fp32
// gradient sums group rows differently, stay within rounding of them.
TEST(Sparse, CaSgdReducedPrecisionRoundsAsDenseStorage) {
  const std::string path = sparse_file("logistic");
  const std::vector<std::string> rounded = {
      "precision.preset=fp32",       "precision.gram_engine=portable",
      "precision.gram_input=bf16",   "precision.gram_accum=bf16",
      "precision.margin_accum=bf16", "precision.gradient_accum=bf16",
      "precision.recurrence=bf16",   "precision.weights=bf16"};
  const std::vector<std::vector<std::string>> cases = {
      rounded,
      {"precision.rounding=stochastic"},  // appended to `rounded`
      {"precision.data=bf16", "precision.gram_input=e4m3", "precision.gram_accum=fp16"},
      {"precision.preset=mixed"},
      {"precision.preset=mixed-wire-bf16"}};
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const bool presets = k >= 3;
    std::vector<std::string> over = presets ? cases[k] : rounded;
    if (k > 0 && !presets) over.insert(over.end(), cases[k].begin(), cases[k].end());
    SCOPED_TRACE(over.back());
    const RunOutcome dense =
        run_quiet(deck(ca_deck(path, "logistic", "dense", "ca-sgd", 8, 8, 1e-3), over));
    const RunOutcome sparse =
        run_quiet(deck(ca_deck(path, "logistic", "sparse", "ca-sgd", 8, 8, 1e-3), over));
    EXPECT_EQ(sparse.report["precision"], dense.report["precision"]);
    EXPECT_EQ(sparse.report["kernels"]["gram_summation"], "fixed");
    const double d = test::relative_difference(sparse.weights, dense.weights);
    EXPECT_LT(d, presets ? 1e-4 : 1e-12);
    EXPECT_LT(sparse.result.final_loss, sparse.result.initial_loss);
  }
}

// The set-up's memory check counts what a sparse share's CA-SGD allocates (room for s·b of its
// longest rows and the vectors of its columns), not a dense s·b × d block: 2^22 hashed columns
// fit where a dense gather would need 17 GB, and are refused where the vectors do not fit.
TEST(Sparse, CaSgdMemoryCheckCountsTheSparseBuffers) {
  const std::string path = sparse_file("logistic");
  const auto run_with = [&](const char* available, int& code) {
    setenv("MINISGD_MEM_AVAILABLE", available, 1);
    comm::MpiCommunicator world(MPI_COMM_WORLD);
    std::ostringstream out, err;
    code = 0;
    try {
      run(deck("data: {source: libsvm, path: " + path +
               ", layout: sparse, hash_bits: 22, cache: false}\n"
               "solver: {method: ca-sgd, s: 16, batch_size: 32, max_iters: 20}\n"
               "precision: {preset: fp64}\n"),
          world, out, err);
    } catch (const Abort& a) {
      code = a.code;
    }
    unsetenv("MINISGD_MEM_AVAILABLE");
    return err.str();
  };
  int code = -1;
  const std::string fits = run_with("4000000000", code);
  EXPECT_EQ(code, 0) << fits;
  const std::string refused = run_with("40000000", code);
  EXPECT_EQ(code, 2);
  if (test::world_rank() == 0) {
    EXPECT_NE(refused.find("solver.s = 16 x solver.batch_size = 32: CA-SGD's Gram and buffers"),
              std::string::npos)
        << refused;
  }
}

// The lazily scaled sparse step (column decomposition, or one rank) keeps an unregularized
// intercept out of its scale: the weights of the plain step, here momentum 0 with the same L2
// (m = g/b + λw, w ← w − ηm), and not those of a regularized intercept.
TEST(Sparse, LazyStepLeavesAnUnregularizedInterceptUnshrunk) {
  const std::string path = sparse_file("logistic");
  for (const char* dec : {"row", "column"}) {
    SCOPED_TRACE(dec);
    const std::string yaml = "data: {source: libsvm, path: " + path +
                             ", cache: false, layout: sparse}\n"
                             "model: {loss: logistic, l2: 0.05, intercept: unregularized}\n"
                             "solver: {decomposition: " +
                             std::string(dec) +
                             ", batch_size: 10, epochs: 3, step_size: 0.2}\n"
                             "precision: {preset: fp64}\n";
    const RunOutcome lazy = run_quiet(deck(yaml));
    const RunOutcome plain =
        run_quiet(deck(yaml, {"solver.optimizer=momentum", "solver.momentum=0"}));
    const RunOutcome shrunk = run_quiet(deck(yaml, {"model.intercept=true"}));
    EXPECT_LT(test::relative_difference(lazy.weights, plain.weights), 1e-10);
    EXPECT_GT(test::relative_difference(lazy.weights, shrunk.weights), 1e-6);
  }
}
