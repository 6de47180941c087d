// Deck parsing: typed values, defaults, overrides, and errors that name the key and line.
#include <gtest/gtest.h>

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
  EXPECT_EQ(c.resolved["solver"]["batch_size"], 16);
  EXPECT_EQ(c.resolved["precision"]["preset"], "fp32");  // defaults are in the resolved deck
}

TEST(Deck, StepSizeMayBeAPlainNumber) {
  EXPECT_DOUBLE_EQ(deck("solver: {step_size: 0.25}").solver.step_size.eta0, 0.25);
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
            "test-deck:2: model.intercept: expected true or false, got '3'");
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
