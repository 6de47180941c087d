#pragma once
// AllReduce with a user merge, executed over point-to-point messages (sendrecv), so the bytes
// counted are the bytes sent. See merge_plan.hpp for the schedule.
#include <cstddef>
#include <cstdint>
#include <functional>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/comm/merge_plan.hpp"

namespace minisgd::comm {

/// Combines `n` received elements into the own elements starting at `own` (global element
/// index `first`); called once per range of a step's `recv`. The result must be the same whichever
/// of the two sides is the own one: order the operands by `step.own_is_low`.
using MergeFn = std::function<void(std::uint8_t* own, const std::uint8_t* received,
                                   std::size_t first, std::size_t n, const PlanStep& step)>;

/// Executes the steps of `plan` whose phase lies in [first, last] on `data` (count elements of
/// elem_bytes each, host memory).
void run_plan(Communicator& comm, const MergePlan& plan, std::uint8_t* data, std::size_t elem_bytes,
              const MergeFn& merge, Phase first = Phase::fold_in, Phase last = Phase::fold_out);

/// Every rank ends with the merge of all ranks' `data`, by the schedule choose_schedule picks.
void merge_allreduce(Communicator& comm, MergeShape shape, std::uint8_t* data, std::size_t count,
                     std::size_t elem_bytes, const MergeFn& merge);

}  // namespace minisgd::comm
