#pragma once
// solver.s: auto (docs/input_deck.md): CA-SGD's s chosen at set-up by the performance model
// (perfmodel/step_model.hpp) on the machine file solver.machine, for this problem's columns
// and rows and the rank count.
#include <cstdint>
#include <ostream>

#include <nlohmann/json_fwd.hpp>

#include "minisgd/config/config.hpp"

namespace minisgd {

/// Sets c.solver.s to the candidate s (powers of two up to 64) of least predicted time per
/// step, prints the predictions on `out` and returns them for the report ("s_auto"). Throws
/// InputError for an unreadable or invalid machine file.
nlohmann::json choose_s(Config& c, std::int64_t columns, std::int64_t rows, int ranks,
                        std::ostream& out);

}  // namespace minisgd
