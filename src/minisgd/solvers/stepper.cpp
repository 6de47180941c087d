#include "minisgd/solvers/stepper.hpp"

#include <nlohmann/json.hpp>

namespace minisgd {

nlohmann::json Stepper::compression() const { return {{"method", "none"}}; }

nlohmann::json Stepper::kernels() const { return nlohmann::json::object(); }

}  // namespace minisgd
