// Prints the step model's prediction for a deck on a machine file as one JSON object
// (docs/performance_model.md):
//   perf/predict DECK MACHINE.yaml --ranks P --features D [--rows N] [--set key=value ...]
// with the time per step of the deck's method and, for every candidate s, CA-SGD's. --rows:
// the training rows, for a machine whose last-level cache can hold them (memory.resident_MB);
// left out, every pass over them streams from memory.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "minisgd/config/deck.hpp"
#include "minisgd/core/errors.hpp"
#include "minisgd/perfmodel/step_model.hpp"

namespace {

nlohmann::json to_json(const minisgd::perfmodel::StepTime& t) {
  return {{"compute_s", t.compute_s}, {"latency_s", t.latency_s}, {"bandwidth_s", t.bandwidth_s},
          {"total_s", t.total_s()},   {"messages", t.messages},   {"bytes", t.bytes}};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace minisgd;
  std::vector<std::string> args(argv + 1, argv + argc), overrides;
  std::string deck, machine_file;
  int ranks = 1;
  long long features = 0, rows = 0;
  try {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const auto value = [&]() -> std::string {
        if (i + 1 >= args.size()) throw InputError(args[i] + ": needs a value");
        return args[++i];
      };
      if (args[i] == "--ranks")
        ranks = std::stoi(value());
      else if (args[i] == "--features")
        features = std::stoll(value());
      else if (args[i] == "--rows")
        rows = std::stoll(value());
      else if (args[i] == "--set")
        overrides.push_back(value());
      else if (deck.empty())
        deck = args[i];
      else if (machine_file.empty())
        machine_file = args[i];
      else
        throw InputError(args[i] + ": unexpected argument");
    }
    if (deck.empty() || machine_file.empty() || ranks < 1 || features < 1 || rows < 0)
      throw InputError(
          "usage: predict DECK MACHINE.yaml --ranks P --features D [--rows N] [--set key=value "
          "...]");
    const Config c = load_deck(deck, overrides);
    const perfmodel::Machine m = perfmodel::load_machine(machine_file);
    const perfmodel::Workload w = perfmodel::workload_of(c, features, ranks, rows);
    nlohmann::json out = {{"deck", deck},   {"machine", m.name},
                          {"ranks", ranks}, {"features", features},
                          {"rows", rows},   {"method", to_string(w.method)},
                          {"s", w.s},       {"step", to_json(perfmodel::predict_step(w, m))}};
    for (const auto& cand : perfmodel::s_candidates(w, m))
      out["ca_sgd_by_s"][std::to_string(cand.s)] = to_json(cand.step);
    out["best_s"] = perfmodel::best_s(w, m);
    std::cout << out.dump(2) << "\n";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "predict: %s\n", e.what());
    return 2;
  }
  return 0;
}
