#include "minisgd/app/verdict.hpp"

#include <cmath>
#include <iomanip>
#include <sstream>

#include "minisgd/core/errors.hpp"

namespace minisgd {

int Verdict::exit_code() const { return valid ? kValid : kInvalid; }

Verdict judge(const ValidationConfig& v, const TrainResult& r) {
  Verdict verdict;
  if (v.reference_loss) {
    const double gap = std::fabs(r.final_loss - *v.reference_loss) / std::fabs(*v.reference_loss);
    verdict.valid = gap <= v.tolerance;
    std::ostringstream s;
    s << "final loss " << std::setprecision(8) << r.final_loss << ", reference "
      << *v.reference_loss << ", relative gap " << std::setprecision(3) << gap
      << (verdict.valid ? " <= " : " > ") << "tolerance " << v.tolerance;
    verdict.why = s.str();
  } else {
    verdict.valid = std::isfinite(r.final_loss) && r.final_loss <= r.initial_loss;
    verdict.why = "no validation.reference_loss: final loss " + std::to_string(r.final_loss) +
                  (verdict.valid ? " <= " : " > ") + "initial loss " +
                  std::to_string(r.initial_loss);
  }
  return verdict;
}

}  // namespace minisgd
