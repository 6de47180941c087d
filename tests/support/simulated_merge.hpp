#pragma once
// Executes the merge AllReduce schedule of comm/merge_plan.hpp for P simulated ranks in one
// process, so properties of a merge can be checked for rank counts the machine cannot run.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "minisgd/comm/merge_allreduce.hpp"
#include "minisgd/comm/merge_plan.hpp"

namespace minisgd::test {

/// data[r] is rank r's payload (the same number of elem_bytes-sized elements on every rank).
/// Steps run stage by stage (fold-in, each reduce round, each gather round, fold-out); every
/// step of a stage sees the buffers as they were before the stage, like simultaneous messages.
/// `schedule` defaults to the one merge_allreduce picks. Throws when a step receives something
/// its sender's step of the same stage does not send.
inline void simulate_merge_allreduce(comm::MergeShape shape,
                                     std::vector<std::vector<std::uint8_t>>& data,
                                     std::size_t elem_bytes, const comm::MergeFn& merge,
                                     const comm::MergeSchedule* schedule = nullptr) {
  const int P = int(data.size());
  const std::size_t count = data[0].size() / elem_bytes;
  const comm::MergeSchedule chosen =
      schedule ? *schedule : comm::choose_schedule(shape, P, count, elem_bytes);
  std::vector<comm::MergePlan> plans;
  int stages = 0;
  for (int r = 0; r < P; ++r) {
    plans.push_back(comm::make_merge_plan(P, r, count, shape, chosen));
    for (const auto& s : plans.back().steps) stages = std::max(stages, s.stage + 1);
  }
  std::vector<std::size_t> next(P, 0);
  for (int k = 0; k < stages; ++k) {
    const std::vector<std::vector<std::uint8_t>> before = data;
    for (int r = 0; r < P; ++r) {
      if (next[r] == plans[r].steps.size() || plans[r].steps[next[r]].stage != k) continue;
      const comm::PlanStep& s = plans[r].steps[next[r]++];
      const auto& sender = plans[s.from].steps;
      if (std::none_of(sender.begin(), sender.end(), [&](const comm::PlanStep& o) {
            return o.stage == k && o.to == r && o.send == s.recv;
          }))
        throw std::logic_error("merge plan: rank " + std::to_string(s.from) + " sends rank " +
                               std::to_string(r) + " something else at stage " + std::to_string(k));
      for (const comm::ElementRange& range : s.recv) {
        if (range.size() == 0) continue;
        const std::uint8_t* received = before[s.from].data() + range.begin * elem_bytes;
        std::uint8_t* own = data[r].data() + range.begin * elem_bytes;
        if (s.merges())
          merge(own, received, range.begin, range.size(), s);
        else
          std::memcpy(own, received, range.size() * elem_bytes);
      }
    }
  }
}

}  // namespace minisgd::test
