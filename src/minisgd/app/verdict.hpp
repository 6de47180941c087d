#pragma once
// The third stage of a run: is the result valid (docs/output.md, "JSON report": result.valid)?
#include <string>

#include "minisgd/config/config.hpp"
#include "minisgd/solvers/trainer.hpp"

namespace minisgd {

struct Verdict {
  bool valid = false;
  std::string why;        // one line: the numbers the verdict rests on
  int exit_code() const;  // kValid or kInvalid
};

/// Valid when the final loss is within validation.tolerance (relative) of
/// validation.reference_loss, or, without a reference, finite and not above the initial loss.
Verdict judge(const ValidationConfig& v, const TrainResult& r);

}  // namespace minisgd
