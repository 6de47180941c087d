#pragma once
// Executes the merge AllReduce schedule of comm/merge_plan.hpp for P simulated ranks in one
// process, so properties of a merge can be checked for rank counts the machine cannot run.
#include <cstdint>
#include <cstring>
#include <vector>

#include "minisgd/comm/merge_allreduce.hpp"
#include "minisgd/comm/merge_plan.hpp"

namespace minisgd::test {

/// data[r] is rank r's payload (the same number of elem_bytes-sized elements on every rank).
/// Steps run stage by stage (fold-in, each reduce round, each gather round, fold-out); every
/// step of a stage sees the buffers as they were before the stage, like simultaneous messages.
inline void simulate_merge_allreduce(comm::MergeShape shape,
                                     std::vector<std::vector<std::uint8_t>>& data,
                                     std::size_t elem_bytes, const comm::MergeFn& merge) {
  using comm::Phase;
  const int P = int(data.size());
  const std::size_t count = data[0].size() / elem_bytes;
  std::vector<comm::MergePlan> plans;
  for (int r = 0; r < P; ++r) plans.push_back(comm::make_merge_plan(P, r, count, shape));
  const int rounds = comm::ceil_log2(plans[0].p2);
  const auto stage = [&](const comm::PlanStep& s) {
    switch (s.phase) {
      case Phase::fold_in: return 0;
      case Phase::reduce: return s.round;
      case Phase::gather: return 2 * rounds + 1 - s.round;
      case Phase::fold_out: return 2 * rounds + 2;
    }
    return -1;
  };
  std::vector<std::size_t> next(P, 0);
  for (int k = 0; k <= 2 * rounds + 2; ++k) {
    const std::vector<std::vector<std::uint8_t>> before = data;
    for (int r = 0; r < P; ++r) {
      if (next[r] == plans[r].steps.size() || stage(plans[r].steps[next[r]]) != k) continue;
      const comm::PlanStep& s = plans[r].steps[next[r]++];
      const std::uint8_t* received = before[s.peer].data() + s.recv.begin * elem_bytes;
      std::uint8_t* own = data[r].data() + s.recv.begin * elem_bytes;
      if (s.recv.size() == 0) continue;
      if (s.merges())
        merge(own, received, s.recv.begin, s.recv.size(), s);
      else
        std::memcpy(own, received, s.recv.size() * elem_bytes);
    }
  }
}

}  // namespace minisgd::test
