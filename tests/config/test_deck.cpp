// Deck parsing: typed values, defaults, overrides, and errors that name the key and line.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "minisgd/core/errors.hpp"
#include "support/test_support.hpp"

using minisgd::test::deck;

TEST(Deck, ReadsTypedValuesAndDefaults) {
  const auto c = deck(
      "model: {loss: poisson, l2: 1.0e-3}\n"
      "solver:\n  batch_size: 16\n  step_size: {eta0: 0.2, schedule: inverse_time, decay: 0.01}\n");
  EXPECT_EQ(c.model.loss, minisgd::Loss::poisson);
  EXPECT_DOUBLE_EQ(c.model.l2, 1e-3);
  EXPECT_EQ(c.solver.batch_size, 16);
  EXPECT_EQ(c.solver.step_size.schedule, minisgd::Schedule::inverse_time);
  EXPECT_DOUBLE_EQ(c.solver.step_size.decay, 0.01);
  EXPECT_EQ(c.solver.decomposition, minisgd::Decomposition::row);  // default
  EXPECT_EQ((*c.resolved)["solver"]["batch_size"], 16);
  EXPECT_EQ((*c.resolved)["precision"]["preset"], "fp32");  // defaults are in the resolved deck
}

TEST(Deck, StepSizeMayBeAPlainNumber) {
  EXPECT_DOUBLE_EQ(deck("solver: {step_size: 0.25}").solver.step_size.eta0, 0.25);
}

// eta0: auto brings the schedule, averaging and reshuffling it was measured with; any of them
// may be given.
TEST(Deck, AutoStepSizeBringsItsScheduleAveragingAndReshuffling) {
  for (const char* yaml : {"solver: {step_size: auto}", "solver: {step_size: {eta0: auto}}"}) {
    SCOPED_TRACE(yaml);
    const auto c = deck(yaml);
    EXPECT_TRUE(c.solver.step_size.eta0_auto);
    EXPECT_EQ(c.solver.step_size.schedule, minisgd::Schedule::linear);
    EXPECT_EQ(c.solver.averaging, minisgd::Averaging::tail);
    EXPECT_TRUE(c.solver.reshuffle);
  }
  const auto given = deck(
      "model: {l2: 0.01}\n"
      "solver: {step_size: {eta0: auto, schedule: optimal}, averaging: none}");
  EXPECT_EQ(given.solver.step_size.schedule, minisgd::Schedule::optimal);
  EXPECT_EQ(given.solver.averaging, minisgd::Averaging::none);
  // A fixed step keeps the plain defaults.
  const auto fixed = deck("solver: {step_size: {eta0: 0.5}}");
  EXPECT_FALSE(fixed.solver.step_size.eta0_auto);
  EXPECT_EQ(fixed.solver.step_size.schedule, minisgd::Schedule::constant);
  EXPECT_EQ(fixed.solver.averaging, minisgd::Averaging::none);
  EXPECT_FALSE(fixed.solver.reshuffle);
  EXPECT_TRUE(minisgd::test::refused("solver: {step_size: {eta0: fast}}",
                                     "solver.step_size.eta0: expected a number, got 'fast'"));
  EXPECT_TRUE(minisgd::test::refused("solver: {step_size: {eta0: auto, decay: 0.1}}",
                                     "linear takes no decay"));
}

TEST(Deck, InterceptMayBeUnregularized) {
  const auto c = deck("model: {intercept: unregularized}");
  EXPECT_TRUE(c.model.intercept);
  EXPECT_TRUE(c.model.free_intercept());
  EXPECT_EQ((*c.resolved)["model"]["intercept"], "unregularized");
  EXPECT_FALSE(deck("model: {intercept: true}").model.free_intercept());
  EXPECT_TRUE(minisgd::test::refused(
      "model: {intercept: unregularized}\nsolver: {method: ca-sgd}",
      "model.intercept: unregularized: ca-sgd's recurrence shrinks every weight"));
}

TEST(Deck, UnknownKeyNamesKeyAndLine) {
  EXPECT_EQ(minisgd::test::deck_error("run: {seed: 1}\nsolver:\n  batch_size: 8\n  bogus: 3\n"),
            "test-deck:4: unknown key 'solver.bogus'");
  EXPECT_EQ(minisgd::test::deck_error("run: {seed: 1}\nsolvr: {batch_size: 8}\n"),
            "test-deck:2: unknown key 'solvr'");
}

TEST(Deck, WrongTypeNamesKeyAndLine) {
  EXPECT_EQ(minisgd::test::deck_error("solver:\n  batch_size: many\n"),
            "test-deck:2: solver.batch_size: expected an integer, got 'many'");
  EXPECT_EQ(minisgd::test::deck_error("model:\n  intercept: 3\n"),
            "test-deck:2: model.intercept: expected true, false or unregularized, got '3'");
  EXPECT_EQ(minisgd::test::deck_error("model:\n  loss: hinge\n"),
            "test-deck:2: model.loss: 'hinge' is not one of logistic | linear | poisson");
  EXPECT_EQ(minisgd::test::deck_error("data: 5\n"), "test-deck:1: data: expected a map of keys");
}

TEST(Deck, OutOfRangeIsAnError) {
  EXPECT_NE(minisgd::test::deck_error("solver: {batch_size: 0}")
                .find("solver.batch_size: 0 is out of range"),
            std::string::npos);
  EXPECT_NE(minisgd::test::deck_error("model: {l2: -1}").find("model.l2: -1 is out of range"),
            std::string::npos);
}

TEST(Deck, OverridesApplyAndAreNamedInErrors) {
  const auto c = deck("solver: {batch_size: 8}", {"solver.batch_size=32", "model.loss=linear"});
  EXPECT_EQ(c.solver.batch_size, 32);
  EXPECT_EQ(c.model.loss, minisgd::Loss::linear);
  EXPECT_EQ(minisgd::test::deck_error("", {"solver.batch_size=x"}),
            "--set solver.batch_size: expected an integer, got 'x'");
  EXPECT_EQ(minisgd::test::deck_error("", {"solver.nope=1"}), "--set solver.nope: unknown key");
  EXPECT_NE(minisgd::test::deck_error("", {"noequals"}).find("expected section.key=value"),
            std::string::npos);
}

TEST(Deck, YamlSyntaxErrorNamesLine) {
  EXPECT_NE(minisgd::test::deck_error("run: {seed: 1\nsolver: [\n").find("test-deck:"),
            std::string::npos);
}

TEST(Deck, FileSourceNeedsPath) {
  EXPECT_NE(minisgd::test::deck_error("data: {source: libsvm}").find("data.path: required"),
            std::string::npos);
}

// A key or section given twice is an error naming it and both lines, at any depth (yaml-cpp
// keeps both entries and reads the first, so the deck would run with half of what it says).
TEST(Deck, DuplicateKeysAreErrors) {
  EXPECT_EQ(minisgd::test::deck_error("solver:\n  epochs: 2\n  batch_size: 4\n  epochs: 3\n"),
            "test-deck:4: duplicate key 'solver.epochs' (first given on line 2)");
  EXPECT_EQ(minisgd::test::deck_error("solver: {epochs: 2}\nmodel: {l2: 0}\nsolver: {epochs: 3}\n"),
            "test-deck:3: duplicate key 'solver' (first given on line 1)");
  EXPECT_EQ(minisgd::test::deck_error("compression: {loco: {bits: 4, bits: 8}}\n"),
            "test-deck:1: duplicate key 'compression.loco.bits' (first given on line 1)");
  EXPECT_EQ(minisgd::test::deck_error("solver: {epochs: 2}\n", {"solver.epochs=3"}), "no error");
}

namespace {

/// Every name in E's table is read back from a deck as its value (`yaml` with @ replaced by
/// the name), the table lists E's values in declaration order under distinct names, and a
/// name outside the table is refused with the table's list.
template <class E, class Get>
void expect_every_name_read(const std::string& yaml, const std::string& key, Get get) {
  const auto with = [&](const std::string& name) {
    std::string text = yaml;
    text.replace(text.find('@'), 1, name);
    return text;
  };
  const auto table = names(E{});
  std::set<std::string> seen;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const auto [value, name] = table[i];
    EXPECT_EQ(int(value), int(i)) << key << ": table out of declaration order at " << name;
    EXPECT_TRUE(seen.insert(name).second) << key << ": " << name << " named twice";
    EXPECT_EQ(get(deck(with(name))), value) << key << ": " << name;
  }
  const std::string error = minisgd::test::deck_error(with("no-such-choice"));
  EXPECT_NE(error.find(key + ": 'no-such-choice' is not one of " + minisgd::choices<E>()),
            std::string::npos)
      << error;
}

}  // namespace

TEST(Deck, EveryClosedChoiceReadsEachNameOfItsTable) {
  using namespace minisgd;
  using C = const Config&;
  expect_every_name_read<Study>("run: {study: @}\nsolver: {method: ca-sgd}", "run.study",
                                [](C c) { return c.run.study; });
  expect_every_name_read<DataSource>("data: {source: @, path: x}", "data.source",
                                     [](C c) { return c.data.source; });
  expect_every_name_read<Fallback>("data: {fallback: @}", "data.fallback",
                                   [](C c) { return c.data.fallback; });
  expect_every_name_read<Standardize>("data: {standardize: @}", "data.standardize",
                                      [](C c) { return c.data.standardize; });
  expect_every_name_read<SyntheticKind>("data: {synthetic: {kind: @}}", "data.synthetic.kind",
                                        [](C c) { return c.data.synthetic.kind; });
  expect_every_name_read<Loss>("model: {loss: @}", "model.loss", [](C c) { return c.model.loss; });
  expect_every_name_read<Method>("solver: {method: @}", "solver.method",
                                 [](C c) { return c.solver.method; });
  expect_every_name_read<Decomposition>("solver: {decomposition: @}", "solver.decomposition",
                                        [](C c) { return c.solver.decomposition; });
  expect_every_name_read<Schedule>("model: {l2: 0.1}\nsolver: {step_size: {schedule: @}}",
                                   "solver.step_size.schedule",
                                   [](C c) { return c.solver.step_size.schedule; });
  expect_every_name_read<OptimizerKind>("solver: {optimizer: @}", "solver.optimizer",
                                        [](C c) { return c.solver.optimizer; });
  expect_every_name_read<Averaging>("solver: {averaging: @}", "solver.averaging",
                                    [](C c) { return c.solver.averaging; });
  expect_every_name_read<precision::Preset>("precision: {preset: @}\nsolver: {method: ca-sgd}",
                                            "precision.preset",
                                            [](C c) { return c.precision.preset; });
  expect_every_name_read<precision::Rounding>("precision: {rounding: @}", "precision.rounding",
                                              [](C c) { return c.precision.plan.rounding; });
  expect_every_name_read<GramEngine>("precision: {gram_engine: @}", "precision.gram_engine",
                                     [](C c) { return c.precision.gram_engine; });
  expect_every_name_read<CompressionMethod>("compression: {method: @}", "compression.method",
                                            [](C c) { return c.compression.method; });
  expect_every_name_read<CastFormat>("compression: {cast: {format: @}}", "compression.cast.format",
                                     [](C c) { return c.compression.cast.format; });
  expect_every_name_read<Dithering>("compression: {qsgd: {dithering: @}}",
                                    "compression.qsgd.dithering",
                                    [](C c) { return c.compression.qsgd.dithering; });
  expect_every_name_read<Dithering>("compression: {global-qsgd: {dithering: @}}",
                                    "compression.global-qsgd.dithering",
                                    [](C c) { return c.compression.global_qsgd.dithering; });
  expect_every_name_read<CommBackend>("comm: {backend: @}", "comm.backend",
                                      [](C c) { return c.comm.backend; });
}
