#pragma once
// Time to target, the procurement figure of merit (docs/output.md, "Time to target"): set-up
// plus training seconds until the objective first reaches the validation target
// reference_loss + tolerance·|reference_loss|, read off the loss history.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "minisgd/report/history.hpp"

namespace minisgd {

struct TimeToTarget {
  std::optional<double> target;           // none without a reference loss
  std::optional<std::int64_t> iteration;  // the first evaluation at or below the target
  double epoch = 0;
  double local_seconds = 0;  // this rank's set-up + training seconds until that evaluation
  std::string why_not;       // when the target was not reached (or there is none)
};

/// The first evaluation in `history` whose loss is at or below the target. Every rank holds the
/// same losses (the objective is a collective), so every rank finds the same evaluation; only
/// its seconds differ, and the caller takes their maximum.
TimeToTarget time_to_target(const std::vector<HistoryRow>& history,
                            std::optional<double> reference_loss, double tolerance,
                            double setup_seconds);

}  // namespace minisgd
