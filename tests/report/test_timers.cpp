// Phase timers (report/timers.hpp): what a Sequence charges to each phase, and that a phase
// named through two different literals is one phase.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "minisgd/report/timers.hpp"

using namespace minisgd;
using namespace std::chrono_literals;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Each phase gets at least the time spent in it and the phases together no more than the
// time around them: so no phase is charged another's time, nor the time before the first.
TEST(Timers, SequenceChargesEachPhaseUntilTheNext) {
  for (const bool fenced : {false, true}) {
    SCOPED_TRACE(fenced ? "fenced" : "unfenced");
    Timers timers(fenced);
    const auto start = std::chrono::steady_clock::now();
    {
      Timers::Sequence phases(timers);
      std::this_thread::sleep_for(30ms);  // before any phase: charged to none
      const auto first = std::chrono::steady_clock::now();
      phases.enter("margins");
      std::this_thread::sleep_for(20ms);
      phases.enter("allreduce");
      std::this_thread::sleep_for(5ms);
      phases.enter("margins");  // entered again: adds to its total
      std::this_thread::sleep_for(10ms);
      phases.enter("update");
      std::this_thread::sleep_for(5ms);
      const double after_first = seconds_since(first);
      EXPECT_GE(timers.seconds("margins"), 0.030);
      EXPECT_GE(timers.seconds("allreduce"), 0.005);
      EXPECT_EQ(timers.seconds("update"), 0.0);  // still running: charged when it ends
      EXPECT_LE(timers.seconds("margins") + timers.seconds("allreduce"), after_first);
    }
    const double total = seconds_since(start);
    EXPECT_GE(timers.seconds("update"), 0.005);
    EXPECT_LE(timers.seconds("margins") + timers.seconds("allreduce") + timers.seconds("update"),
              total - 0.030);
  }
}

TEST(Timers, ScopesAndSequencesAddToTheSamePhase) {
  Timers timers;
  {
    auto t = timers.scope("update");
    std::this_thread::sleep_for(10ms);
  }
  {
    Timers::Sequence phases(timers);
    phases.enter("update");
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_GE(timers.seconds("update"), 0.020);
}

// The totals are found by the literal's address first; another array with the same characters
// (another address) must still reach the same phase, and a different name another one.
TEST(Timers, APhaseIsItsNameNotItsAddress) {
  static const char gradient[] = "gradient";
  static const char gradients[] = "gradients";
  Timers timers;
  for (int round = 0; round < 2; ++round) {  // the second round finds both by address
    {
      auto t = timers.scope("gradient");
      std::this_thread::sleep_for(5ms);
    }
    {
      auto t = timers.scope(gradient);
      std::this_thread::sleep_for(5ms);
    }
    {
      auto t = timers.scope(gradients);
      std::this_thread::sleep_for(1ms);
    }
  }
  EXPECT_GE(timers.seconds("gradient"), 0.020);
  EXPECT_GE(timers.seconds("gradients"), 0.002);
  EXPECT_LT(timers.seconds("gradients"), timers.seconds("gradient"));
  EXPECT_EQ(timers.seconds("gradien"), 0.0);
}

}  // namespace
