#pragma once
#include <cmath>
#include <cstdint>

#include "minisgd/config/config.hpp"

namespace minisgd {

/// η at global iteration t (0-based) in epoch e.
inline double step_size(const StepSizeConfig& c, std::int64_t t, std::int64_t e) {
  switch (c.schedule) {
    case Schedule::constant: return c.eta0;
    case Schedule::inverse_time: return c.eta0 / (1.0 + c.decay * double(t));
    case Schedule::step: return c.eta0 * std::pow(c.decay, double(e));
    // 1/(λ(t + t0)) with t0 = 1/(λη₀), so that the first step is η₀.
    case Schedule::optimal: return c.eta0 / (1.0 + c.l2 * c.eta0 * double(t));
  }
  return c.eta0;
}

}  // namespace minisgd
