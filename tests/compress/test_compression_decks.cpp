// Every deck of input_decks/compression at the world size (run at 1, 2, 3 and 4 ranks): it
// runs VALID against its stored reference, and its final loss is within the bound of
// the same deck run dense (compression.method none) at the same P: 1% for every method, 2%
// for gTop-k at density 0.01.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "support/test_support.hpp"

using namespace minisgd;

TEST(CompressionDecks, RunValidAndStayCloseToDense) {
  std::vector<std::filesystem::path> decks;
  for (const auto& e : std::filesystem::directory_iterator(MINISGD_COMPRESSION_DECKS))
    if (e.path().extension() == ".yaml") decks.push_back(e.path());
  std::sort(decks.begin(), decks.end());
  ASSERT_GE(decks.size(), 16u);

  std::map<std::string, double> dense_loss;  // by data, model and solver settings
  for (const auto& path : decks) {
    const std::string name = path.stem().string();
    std::vector<std::string> overrides = {"output.report=''", "output.history=''"};
    if (name.rfind("heart", 0) == 0)
      overrides.push_back(std::string("data.path=") + MINISGD_HEART_SCALE);
    const Config c = load_deck(path.string(), overrides);
    const RunOutcome o = test::run_quiet(c);
    EXPECT_TRUE(o.valid) << name << ": " << o.report["result"]["verdict"];
    EXPECT_EQ(o.report["compression"]["method"], to_string(c.compression.method)) << name;

    const std::string settings = (*c.resolved)["data"].dump() + (*c.resolved)["model"].dump() +
                                 (*c.resolved)["solver"].dump();
    if (!dense_loss.count(settings)) {
      overrides.push_back("compression.method=none");
      dense_loss[settings] = test::run_quiet(load_deck(path.string(), overrides)).result.final_loss;
    }
    const double dense = dense_loss[settings];
    const double bound = c.compression.method == CompressionMethod::gtopk ? 0.02 : 0.01;
    EXPECT_LE(std::fabs(o.result.final_loss - dense), bound * dense)
        << name << ": " << o.result.final_loss << " vs dense " << dense;
  }
}
