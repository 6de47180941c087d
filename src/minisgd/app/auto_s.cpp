#include "minisgd/app/auto_s.hpp"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "minisgd/perfmodel/step_model.hpp"

namespace minisgd {

nlohmann::json choose_s(Config& c, std::int64_t columns, std::int64_t rows, int ranks,
                        std::ostream& out) {
  const perfmodel::Machine m = perfmodel::load_machine(c.solver.machine);
  const auto candidates =
      perfmodel::s_candidates(perfmodel::workload_of(c, columns, ranks, rows), m);
  const auto best = std::min_element(
      candidates.begin(), candidates.end(),
      [](const auto& a, const auto& b) { return a.step.total_s() < b.step.total_s(); });
  c.solver.s = best->s;
  nlohmann::json rep = {{"machine", m.name},
                        {"machine_file", c.solver.machine},
                        {"s", best->s},
                        {"candidates", nlohmann::json::array()}};
  out << "s: auto on " << m.name << ": predicted ns per sample";
  const double b = double(c.solver.batch_size);
  for (const auto& k : candidates) {
    rep["candidates"].push_back({{"s", k.s},
                                 {"step_s", k.step.total_s()},
                                 {"compute_s", k.step.compute_s},
                                 {"latency_s", k.step.latency_s},
                                 {"bandwidth_s", k.step.bandwidth_s}});
    char cell[48];
    std::snprintf(cell, sizeof cell, " s=%d %.4g", k.s, k.step.total_s() / b * 1e9);
    out << (k.s == 1 ? ":" : ",") << cell;
  }
  out << "; chosen s = " << best->s << "\n";
  return rep;
}

}  // namespace minisgd
