#pragma once
#include <cmath>
#include <cstdint>

#include "minisgd/config/config.hpp"

namespace minisgd {

/// η at global iteration t (0-based) in epoch e of a run of `total` planned steps.
inline double step_size(const StepSizeConfig& c, std::int64_t t, std::int64_t e,
                        std::int64_t total) {
  switch (c.schedule) {
    case Schedule::constant: return c.eta0;
    case Schedule::inverse_time: return c.eta0 / (1.0 + c.decay * double(t));
    case Schedule::step: return c.eta0 * std::pow(c.decay, double(e));
    // 1/(λ(t + t0)) with t0 = 1/(λη₀), so that the first step is η₀.
    case Schedule::optimal: return c.eta0 / (1.0 + c.l2 * c.eta0 * double(t));
    // η₀ at the first step, η₀/T at the last.
    case Schedule::linear: return c.eta0 * (1.0 - double(t) / double(total > 0 ? total : 1));
  }
  return c.eta0;
}

}  // namespace minisgd
