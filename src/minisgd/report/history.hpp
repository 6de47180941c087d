#pragma once
// One row of the loss history: what the trainer records at each evaluation and what
// output.history writes (docs/output.md).
#include <cstdint>

namespace minisgd {

struct HistoryRow {
  std::int64_t iteration;
  double epoch;
  double loss;
  double test_loss;  // NaN when there is no test set
  double seconds;    // training time so far (evaluation excluded)
};

}  // namespace minisgd
