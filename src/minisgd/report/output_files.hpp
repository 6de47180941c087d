#pragma once
// What a run leaves behind: the printed summary and the report, history and weights files.
#include <ostream>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "minisgd/config/config.hpp"
#include "minisgd/report/history.hpp"

namespace minisgd {

/// The end-of-run summary: timers, communication counters, the FOM line and the verdict.
void print_summary(std::ostream& out, const nlohmann::json& report);

/// Writes output.report (JSON), output.history (CSV) and output.weights (one %.17g per line),
/// each atomically; keys left empty are skipped. Throws RuntimeFailure on I/O errors.
void write_outputs(const Config& c, const nlohmann::json& report,
                   const std::vector<HistoryRow>& history, const std::vector<double>& weights);

}  // namespace minisgd
