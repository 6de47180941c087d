#pragma once
// Helpers shared by the tests: decks from text, quiet runs, weight comparisons.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "minisgd/app/run.hpp"
#include "minisgd/config/deck.hpp"
#include "minisgd/core/errors.hpp"

namespace minisgd::test {

/// A Config from YAML text plus overrides, as the executable would build it.
inline Config deck(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return parse_deck(yaml, "test-deck", overrides);
}

/// The InputError message a deck gives, or "no error".
inline std::string deck_error(const std::string& yaml,
                              const std::vector<std::string>& overrides = {}) {
  try {
    deck(yaml, overrides);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

/// Passes when the deck is refused with a message containing `expected`; a failure shows the
/// message the deck gave instead.
inline ::testing::AssertionResult refused(const std::string& yaml, const std::string& expected,
                                          const std::vector<std::string>& overrides = {}) {
  const std::string got = deck_error(yaml, overrides);
  if (got.find(expected) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "expected an error containing '" << expected << "', got '" << got << "'";
}

/// Runs on `comm` with every line of output discarded.
inline RunOutcome run_quiet(const Config& c, MPI_Comm comm = MPI_COMM_WORLD) {
  struct Null : std::streambuf {
    int overflow(int ch) override { return ch; }
  } null_buf;
  std::ostream null(&null_buf);
  comm::MpiCommunicator world(comm);
  return run(c, world, null, null);
}

/// max_i |a_i - b_i| / max(max_i |b_i|, tiny): the relative difference of two weight vectors.
inline double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, scale = 1e-300;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff = std::fmax(diff, std::fabs(a[i] - b[i]));
    scale = std::fmax(scale, std::fabs(b[i]));
  }
  return a.size() == b.size() ? diff / scale : INFINITY;
}

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
inline int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

}  // namespace minisgd::test
