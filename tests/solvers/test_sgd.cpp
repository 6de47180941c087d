// SGD end to end under MPI (run at 1, 2, 3 and 4 ranks): P-independence, agreement with an
// independent serial implementation, bitwise reproducibility, counters, and clear errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "minisgd/core/errors.hpp"
#include "minisgd/data/raw_data.hpp"
#include "support/test_support.hpp"

using namespace minisgd;
using test::deck;
using test::run_quiet;

namespace {

std::string synthetic_deck(const std::string& kind, const std::string& loss, const std::string& dec,
                           const std::string& preset, const std::string& intercept = "true") {
  return "run: {seed: 5}\n"
         "data: {source: synthetic, synthetic: {kind: " +
         kind +
         ", rows: 240, features: 10}}\n"
         "model: {loss: " +
         loss + ", l2: 1.0e-3, intercept: " + intercept +
         "}\n"
         "solver: {decomposition: " +
         dec +
         ", batch_size: 12, epochs: 2, reshuffle: true,\n"
         "         step_size: {eta0: 0.05, schedule: inverse_time, decay: 0.01}}\n"
         "precision: {preset: " +
         preset + "}\n";
}

int abort_code(const Config& c) {
  try {
    run_quiet(c);
  } catch (const Abort& a) {
    return a.code;
  }
  return 0;
}

}  // namespace

// The batch sequence does not depend on P, so in FP64 the weights agree with a one-rank run
// up to summation order: 1e-10 relative.
TEST(Sgd, Fp64WeightsDoNotDependOnRankCount) {
  const char* problems[][2] = {
      {"synth", "logistic"}, {"linear-synth", "linear"}, {"poisson-synth", "poisson"}};
  for (const char* dec : {"row", "column"}) {
    for (const auto& pr : problems) {
      SCOPED_TRACE(std::string(dec) + " " + pr[1]);
      const Config c = deck(synthetic_deck(pr[0], pr[1], dec, "fp64", "unregularized"));
      const RunOutcome all = run_quiet(c, MPI_COMM_WORLD);
      const RunOutcome one = run_quiet(c, MPI_COMM_SELF);
      EXPECT_EQ(all.result.iterations, 40);
      EXPECT_LT(test::relative_difference(all.weights, one.weights), 1e-10);
      EXPECT_NEAR(all.result.final_loss, one.result.final_loss,
                  1e-12 * std::fabs(one.result.final_loss));
      EXPECT_LT(all.result.final_loss, all.result.initial_loss);
    }
  }
}

TEST(Sgd, RowAndColumnDecompositionsAgree) {
  const RunOutcome row = run_quiet(deck(synthetic_deck("synth", "logistic", "row", "fp64")));
  const RunOutcome col = run_quiet(deck(synthetic_deck("synth", "logistic", "column", "fp64")));
  EXPECT_LT(test::relative_difference(row.weights, col.weights), 1e-10);
}

// An independent serial SGD written here from the update formula
// w ← ρw − (η/b)·X_Bᵀ ℓ'(X_B w), on heart_scale in file order: 22 batches of 12 rows, then a
// short one of the last 6 rows (its rows weigh η/b too), 23 steps an epoch.
TEST(Sgd, MatchesIndependentSerialImplementation) {
  const RawData d = read_libsvm(MINISGD_HEART_SCALE, 0);
  const std::int64_t b = 12, nb = (d.rows + b - 1) / b, epochs = 3;
  ASSERT_NE(d.rows % b, 0);
  const double eta0 = 0.1, decay = 0.05, l2 = 1e-2;
  std::vector<double> w(d.cols, 0.0);
  for (std::int64_t t = 0; t < epochs * nb; ++t) {
    const double eta = eta0 / (1 + decay * double(t));
    std::vector<double> g(d.cols, 0.0);
    for (std::int64_t r = (t % nb) * b; r < std::min(d.rows, (t % nb + 1) * b); ++r) {
      double z = 0;
      for (auto k = d.row_ptr[r]; k < d.row_ptr[r + 1]; ++k) z += d.val[k] * w[d.col[k]];
      const double y = d.labels[r];
      const double u = -y / (1 + std::exp(y * z));
      for (auto k = d.row_ptr[r]; k < d.row_ptr[r + 1]; ++k) g[d.col[k]] += u * d.val[k];
    }
    for (std::int64_t j = 0; j < d.cols; ++j) w[j] = (1 - eta * l2) * w[j] - eta / b * g[j];
  }
  for (const char* dec : {"row", "column"}) {
    const Config c = deck(std::string("data: {source: libsvm, path: ") + MINISGD_HEART_SCALE +
                          ", shuffle: false, cache: false}\n"
                          "model: {loss: logistic, l2: 1.0e-2}\n"
                          "solver: {decomposition: " +
                          dec +
                          ", batch_size: 12, epochs: 3,\n"
                          "  step_size: {eta0: 0.1, schedule: inverse_time, decay: 0.05}}\n"
                          "precision: {preset: fp64}\n");
    const RunOutcome o = run_quiet(c);
    EXPECT_LT(test::relative_difference(o.weights, w), 1e-12) << dec;
  }
}

// model.intercept: unregularized: the serial SGD above, except that the intercept (the last
// weight, 1 in every row) takes w ← w − (η/b)·g without the shrink by ρ = 1 − ηλ, in both
// decompositions, and with momentum (μ = 0.5, L2 as λw for the other weights only); the
// objective leaves it out of the L2 term too.
TEST(Sgd, UnregularizedInterceptMatchesIndependentSerialImplementation) {
  const RawData d = read_libsvm(MINISGD_HEART_SCALE, 0);
  const std::int64_t b = 12, nb = (d.rows + b - 1) / b, epochs = 3, n = d.cols + 1;
  const double eta0 = 0.1, decay = 0.05, l2 = 1e-2, mu = 0.5;
  for (const char* optimizer : {"sgd", "momentum"}) {
    const bool momentum = std::string(optimizer) == "momentum";
    std::vector<double> w(n, 0.0), m(n, 0.0);
    for (std::int64_t t = 0; t < epochs * nb; ++t) {
      const double eta = eta0 / (1 + decay * double(t));
      std::vector<double> g(n, 0.0);
      for (std::int64_t r = (t % nb) * b; r < std::min(d.rows, (t % nb + 1) * b); ++r) {
        double z = w[n - 1];
        for (auto k = d.row_ptr[r]; k < d.row_ptr[r + 1]; ++k) z += d.val[k] * w[d.col[k]];
        const double y = d.labels[r];
        const double u = -y / (1 + std::exp(y * z));
        for (auto k = d.row_ptr[r]; k < d.row_ptr[r + 1]; ++k) g[d.col[k]] += u * d.val[k];
        g[n - 1] += u;
      }
      for (std::int64_t j = 0; j < n; ++j) {
        const double lj = j == n - 1 ? 0.0 : l2;
        if (momentum) {
          m[j] = mu * m[j] + (g[j] / b + lj * w[j]);
          w[j] -= eta * m[j];
        } else {
          w[j] = j == n - 1 ? w[j] - eta / b * g[j] : (1 - eta * l2) * w[j] - eta / b * g[j];
        }
      }
    }
    double loss = 0, norm2 = 0;
    for (std::int64_t r = 0; r < d.rows; ++r) {
      double z = w[n - 1];
      for (auto k = d.row_ptr[r]; k < d.row_ptr[r + 1]; ++k) z += d.val[k] * w[d.col[k]];
      loss += std::log1p(std::exp(-d.labels[r] * z));
    }
    for (std::int64_t j = 0; j + 1 < n; ++j) norm2 += w[j] * w[j];
    const double objective = loss / double(d.rows) + 0.5 * l2 * norm2;
    for (const char* dec : {"row", "column"}) {
      SCOPED_TRACE(std::string(optimizer) + " " + dec);
      const Config c = deck(std::string("data: {source: libsvm, path: ") + MINISGD_HEART_SCALE +
                            ", shuffle: false, cache: false}\n"
                            "model: {loss: logistic, l2: 1.0e-2, intercept: unregularized}\n"
                            "solver: {decomposition: " +
                            dec + ", optimizer: " + optimizer +
                            ", momentum: 0.5, batch_size: 12, epochs: 3,\n"
                            "  step_size: {eta0: 0.1, schedule: inverse_time, decay: 0.05}}\n"
                            "precision: {preset: fp64}\n");
      const RunOutcome o = run_quiet(c);
      EXPECT_LT(test::relative_difference(o.weights, w), 1e-12);
      EXPECT_NEAR(o.result.final_loss, objective, 1e-12 * objective);
    }
  }
}

TEST(Sgd, SameDeckTwiceGivesBitwiseIdenticalWeights) {
  for (const char* dec : {"row", "column"}) {
    const Config c = deck(synthetic_deck("synth", "logistic", dec, "fp32"));
    const RunOutcome a = run_quiet(c), b = run_quiet(c);
    ASSERT_EQ(a.weights.size(), b.weights.size());
    EXPECT_EQ(0,
              std::memcmp(a.weights.data(), b.weights.data(), a.weights.size() * sizeof(double)));
  }
}

// Mixed-precision SGD: X stored in 2 bytes (bf16 or fp16), arithmetic and weights in fp32,
// against fp32 SGD with the same batches and steps. Rounding X to bf16 perturbs each entry
// by at most 2^-9 relative, so the final objective stays within 0.5%; and the run must
// really have used the narrow X (half the bytes, a different objective).
TEST(Sgd, TwoByteStorageHalvesTheMatrixAndStaysWithinHalfPercentOfFp32) {
  const auto bytes = [](const RunOutcome& o) {
    return o.report["problem"]["matrix_bytes_per_rank"].get<std::uint64_t>();
  };
  for (const char* dec : {"row", "column"}) {
    const std::string yaml = synthetic_deck("synth", "logistic", dec, "fp32");
    const RunOutcome fp32 = run_quiet(deck(yaml));
    for (const char* data : {"bf16", "fp16"}) {
      SCOPED_TRACE(std::string(dec) + " " + data);
      const RunOutcome lo = run_quiet(deck(yaml, {std::string("precision.data=") + data}));
      EXPECT_GT(bytes(lo), 0u);
      EXPECT_EQ(2 * bytes(lo), bytes(fp32));
      EXPECT_EQ(lo.report["precision"]["knobs"]["data"]["native"], true);
      ASSERT_EQ(lo.result.iterations, fp32.result.iterations);
      const double gap =
          std::fabs(lo.result.final_loss - fp32.result.final_loss) / fp32.result.final_loss;
      EXPECT_LT(gap, 0.005) << "fp32 " << fp32.result.final_loss << ", " << data << " "
                            << lo.result.final_loss;
      EXPECT_NE(lo.result.final_loss, fp32.result.final_loss);
      EXPECT_LT(lo.result.final_loss, lo.result.initial_loss);
    }
  }
  // The mixed preset is bf16 storage for sgd too.
  const RunOutcome mixed = run_quiet(deck(synthetic_deck("synth", "logistic", "row", "mixed")));
  EXPECT_EQ(mixed.report["precision"]["knobs"]["data"]["format"], "bf16");
}

// fp32 storage with fp64 arithmetic: X rounded once to fp32, everything else as fp64 SGD.
// heart_scale's decimal values are not fp32 numbers (the synthetic generators draw in fp32,
// so their data would be stored exactly).
TEST(Sgd, Fp32StorageWithFp64ArithmeticIsCloseToFp64) {
  const std::string yaml = std::string("data: {source: libsvm, path: ") + MINISGD_HEART_SCALE +
                           ", cache: false}\n"
                           "model: {loss: logistic, l2: 1.0e-2}\n"
                           "solver: {decomposition: column, batch_size: 12, epochs: 2,\n"
                           "  step_size: {eta0: 0.1, schedule: inverse_time, decay: 0.05}}\n"
                           "precision: {preset: fp64}\n";
  const RunOutcome fp64 = run_quiet(deck(yaml));
  const RunOutcome mixed = run_quiet(deck(yaml, {"precision.data=fp32"}));
  EXPECT_LT(test::relative_difference(mixed.weights, fp64.weights), 1e-5);
  EXPECT_GT(test::relative_difference(mixed.weights, fp64.weights), 0.0);
}

// Row decomposition: one AllReduce of d floats per step, 2(P-1)/P·4d bytes under the
// bandwidth-optimal model. Column: one AllReduce of b floats per step.
TEST(Sgd, CommunicatorCountsOneAllreducePerStep) {
  const int P = test::world_size();
  for (const char* dec : {"row", "column"}) {
    const RunOutcome o = run_quiet(deck(synthetic_deck("synth", "logistic", dec, "fp32")));
    const auto& ar = o.report["comm"]["allreduce"];
    const std::uint64_t n = std::string(dec) == "row" ? 11 : 12;  // d+intercept, or b
    EXPECT_EQ(ar["calls"].get<std::uint64_t>(), 40u);
    EXPECT_EQ(ar["bytes_sent"].get<std::uint64_t>(),
              40 * std::uint64_t(2.0 * (P - 1) / P * double(4 * n)));
    for (const char* key : {"version", "git_hash", "kokkos", "ranks", "deck", "timers", "fom"})
      EXPECT_TRUE(o.report.contains(key)) << key;
    EXPECT_EQ(o.report["ranks"], P);
    EXPECT_GT(o.report["result"]["samples_per_s"].get<double>(), 0);
  }
}

TEST(Sgd, DivergenceIsARuntimeFailure) {
  const Config c = deck(synthetic_deck("poisson-synth", "poisson", "row", "fp32"),
                        {"solver.step_size=1000", "solver.eval_every=5"});
  EXPECT_EQ(abort_code(c), kRuntimeFailure);
}

// The modelled network charges every collective ⌈log2 P⌉·α + bytes/β on top of its real time.
TEST(Sgd, EmulatedNetworkChargesLatencyPerCollective) {
  const int P = test::world_size();
  const Config c = deck(synthetic_deck("synth", "logistic", "row", "fp32"),
                        {"comm.emulate={latency_us: 500, bandwidth_GBps: 1000}"});
  const RunOutcome o = run_quiet(c);
  const double seconds = o.report["comm"]["allreduce"]["seconds"].get<double>();
  const double modelled = 40 * std::ceil(std::log2(double(P))) * 500e-6;
  EXPECT_GE(seconds, modelled);
  EXPECT_EQ(o.report.contains("comm_emulation"), true);
  if (P > 1) {
    EXPECT_GE(o.result.train_seconds, modelled);
  }
}
