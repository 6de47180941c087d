// solver.s: auto (run at 1 and 2 ranks): the model's choice follows the machine file (a slow
// network gives s > 1 at P > 1, a free one s = 1), the report records the candidates with the
// chosen one the least, the run is the run of that s, and the deck refuses what makes no sense.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "support/test_support.hpp"

using namespace minisgd;
using test::deck;

namespace {

/// A machine file with this network latency (the other figures are those of a modest CPU whose
/// host share of a step is negligible).
std::string machine_file(double latency_us) {
  const std::string path = ::testing::TempDir() + "minisgd_auto_s_" +
                           std::to_string(int(latency_us)) + "_" +
                           std::to_string(test::world_size()) + ".yaml";
  if (test::world_rank() == 0)
    std::ofstream(path) << "name: test machine\nsource: test_auto_s.cpp\n"
                           "memory: {bandwidth_GBps: 10, cache_MB: 1}\n"
                           "kernels: {stream_efficiency: 0.5, row_ns: 20, launch_us: 0.1,\n"
                           "  gemm_fp64_GFps: 20, gemm_fp32_GFps: 40, gemm_bf16_GFps: 80,\n"
                           "  gram_entry_ns: 0.1, scalar_GFps: 2, decode_ns: 0.1, ca_row_ns: 1}\n"
                           "host: {sgd_step_us: 0.001, ca_outer_us: 0.001, ca_inner_us: 0.001,\n"
                           "  wait_overshoot_us: 0.001}\n"
                           "network: {latency_us: "
                        << latency_us << ", bandwidth_GBps: 10}\n";
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

std::string auto_deck(const std::string& machine) {
  return "run: {seed: 4}\n"
         "data: {source: synthetic, synthetic: {kind: synth, rows: 640, features: 15}}\n"
         "model: {loss: logistic, l2: 1.0e-3}\n"
         "solver: {method: ca-sgd, s: auto, machine: " +
         machine +
         ", batch_size: 16, epochs: 2, step_size: 0.1}\n"
         "precision: {preset: fp64}\n";
}

}  // namespace

TEST(AutoS, ChoiceFollowsTheNetworkAndIsRecordedAndUsed) {
  const int P = test::world_size();
  for (const double latency_us : {0.001, 1000.0}) {
    SCOPED_TRACE(latency_us);
    const RunOutcome o = test::run_quiet(deck(auto_deck(machine_file(latency_us))));
    const auto& rep = o.report.at("s_auto");
    const int s = rep.at("s").get<int>();
    // With one rank, or a free network, batching steps only adds work; a 1 ms message at
    // P = 2 is worth saving.
    if (P == 1 || latency_us < 1)
      EXPECT_EQ(s, 1);
    else
      EXPECT_GT(s, 1);
    double least = 1e300, chosen = -1;
    for (const auto& k : rep.at("candidates")) {
      least = std::min(least, k.at("step_s").get<double>());
      if (k.at("s").get<int>() == s) chosen = k.at("step_s").get<double>();
      EXPECT_NEAR(k.at("step_s").get<double>(),
                  k.at("compute_s").get<double>() + k.at("latency_s").get<double>() +
                      k.at("bandwidth_s").get<double>(),
                  1e-12);
    }
    EXPECT_EQ(chosen, least);
    // The run is the run of that s: one AllReduce per outer step of s steps, and the same
    // weights as the deck with s given.
    const auto iterations = o.result.iterations;
    EXPECT_EQ(o.report.at("comm").at("allreduce").at("calls").get<std::int64_t>(),
              (iterations + s - 1) / s);
    const RunOutcome given =
        test::run_quiet(deck(auto_deck("x"), {"solver.s=" + std::to_string(s), "solver.machine="}));
    EXPECT_EQ(test::relative_difference(o.weights, given.weights), 0.0);
    EXPECT_EQ(o.report.at("deck").at("solver").at("s"), "auto");
  }
}

TEST(AutoS, DeckRefusesWhatMakesNoSense) {
  EXPECT_TRUE(test::refused("solver: {method: ca-sgd, s: auto}\n", "solver.s: auto needs"));
  EXPECT_TRUE(test::refused("solver: {s: auto, machine: m.yaml}\n", "solver.s: inner steps"));
  EXPECT_TRUE(test::refused("solver: {method: ca-sgd, s: 4, machine: m.yaml}\n",
                            "solver.machine: is read only with solver.s: auto"));
  EXPECT_TRUE(test::refused("solver: {method: ca-sgd, s: automatic}\n", "solver.s"));
}
