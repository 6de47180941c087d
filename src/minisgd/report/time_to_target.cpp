#include "minisgd/report/time_to_target.hpp"

#include <cmath>
#include <cstdio>

namespace minisgd {

TimeToTarget time_to_target(const std::vector<HistoryRow>& history,
                            std::optional<double> reference_loss, double tolerance,
                            double setup_seconds) {
  TimeToTarget t;
  if (!reference_loss) {
    t.why_not = "no validation.reference_loss";
    return t;
  }
  // The upper edge of the VALID band |F − ref| ≤ tolerance·|ref| (also for a negative ref).
  t.target = *reference_loss + tolerance * std::fabs(*reference_loss);
  double best = INFINITY;
  for (const HistoryRow& h : history) {
    if (h.loss <= *t.target) {
      t.iteration = h.iteration;
      t.epoch = h.epoch;
      t.local_seconds = setup_seconds + h.seconds;
      return t;
    }
    best = std::fmin(best, h.loss);
  }
  char why[160];
  std::snprintf(why, sizeof why, "not reached: lowest evaluated loss %.8g > target %.8g", best,
                *t.target);
  t.why_not = why;
  return t;
}

}  // namespace minisgd
