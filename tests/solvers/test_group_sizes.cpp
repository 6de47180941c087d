// group_sizes (solvers/trainer.hpp) names every size of group that train() hands a stepper: the
// set-up warms the collectives of those sizes, so a size it misses pays the communication
// library's first-call costs inside the timed training.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "minisgd/solvers/trainer.hpp"

namespace minisgd {
namespace {

/// A stepper that only records the sizes of the groups it is handed.
class Recorder final : public Stepper {
 public:
  explicit Recorder(int group) : group_(group) {}
  int group_size() const override { return group_; }
  void advance(const std::vector<StepSpec>& steps) override { seen.insert(int(steps.size())); }
  Vector<double> local_weights() const override { return w_; }
  void state(StateArchive&) override {}
  std::set<int> seen;

 private:
  int group_;
  Vector<double> w_{"w", 1};
};

Config run_of(double epochs, std::int64_t max_iters, std::int64_t eval_every) {
  Config c;
  c.solver.epochs = epochs;
  c.solver.max_iters = max_iters;
  c.solver.eval_every = eval_every;
  c.output.warmup_steps = 0;
  return c;
}

std::set<int> as_set(const std::vector<int>& v) { return {v.begin(), v.end()}; }

std::set<int> handed(const Config& c, std::int64_t nb, int group) {
  Recorder r(group);
  Timers timers;
  TrainHooks hooks;
  hooks.elapsed = [] { return 0.0; };
  hooks.clock_max = [](double t) { return t; };
  hooks.progress = [](const std::string&) {};
  train(c, nb, r, Evaluation{[](const Vector<double>&) { return 0.5; }, {}}, timers, hooks);
  return r.seen;
}

TEST(GroupSizes, TheSizesWorkedOutByHand) {
  // 3 epochs of 625 batches, an evaluation each epoch, s = 64: 9 groups of 64 and one of 49.
  EXPECT_EQ(as_set(group_sizes(run_of(3, 0, 0), 625, 64)), (std::set<int>{64, 49}));
  // 250 steps, an evaluation every 100: 64 + 36, 64 + 36, then 50.
  EXPECT_EQ(as_set(group_sizes(run_of(0, 250, 100), 1000, 64)), (std::set<int>{64, 36, 50}));
  // Evaluations closer than a group: every group is the stretch (30 steps; the last 10).
  EXPECT_EQ(as_set(group_sizes(run_of(0, 100, 30), 1000, 64)), (std::set<int>{30, 10}));
  // SGD: one step at a time.
  EXPECT_EQ(as_set(group_sizes(run_of(2.5, 0, 0), 40, 1)), (std::set<int>{1}));
  // No size twice.
  const std::vector<int> sizes = group_sizes(run_of(4, 0, 0), 128, 16);
  EXPECT_EQ(sizes, (std::vector<int>{16}));
}

TEST(GroupSizes, AreTheSizesTheTrainingLoopHandsOver) {
  struct Case {
    double epochs;
    std::int64_t max_iters, eval_every, nb;
    int group;
  };
  for (const Case& k : {Case{3, 0, 0, 625, 64}, Case{0, 250, 100, 1000, 64},
                        Case{0, 100, 30, 1000, 64}, Case{1.3, 0, 0, 97, 16}, Case{2, 0, 7, 50, 4},
                        Case{0, 71, 1000000, 25, 5}, Case{2, 0, 0, 40, 1}}) {
    SCOPED_TRACE(::testing::Message()
                 << "epochs " << k.epochs << " max_iters " << k.max_iters << " eval_every "
                 << k.eval_every << " nb " << k.nb << " group " << k.group);
    const Config c = run_of(k.epochs, k.max_iters, k.eval_every);
    EXPECT_EQ(as_set(group_sizes(c, k.nb, k.group)), handed(c, k.nb, k.group));
  }
}

}  // namespace
}  // namespace minisgd
