#pragma once
// Per-phase wall-clock timers, each phase also a Kokkos Tools region "minisgd::<phase>".
// Fenced (output.phase_timers: true): each interval is fenced at both ends, so asynchronous
// kernels are charged to the phase that launched them, at the price of fences inside the
// measured time. Unfenced (the default): host wall time from entering to leaving the phase,
// exact on host backends, launch time plus the phase's own waits on a device. A phase costs
// two clock reads and no allocation: SGD's step on a short row is a microsecond.
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/profiling.hpp"

namespace minisgd {

class Timers {
 public:
  class Scope {
   public:
    Scope(Timers& t, const char* phase)
        : fenced_(t.fenced_), total_(t.total(phase)), region_("minisgd::", phase) {
      if (fenced_) fence("phase timer");
      timer_.reset();
    }
    ~Scope() {
      if (fenced_) fence("phase timer");
      total_ += timer_.seconds();
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    bool fenced_;
    double& total_;
    Region region_;
    Kokkos::Timer timer_;
  };

  explicit Timers(bool fenced = false) : fenced_(fenced) {}
  bool fenced() const { return fenced_; }

  Scope scope(const char* phase) { return Scope(*this, phase); }
  double seconds(std::string_view phase) const;

  /// {phase: {min, mean, max}} over the ranks of `comm` (collective: every rank must call
  /// with the same phases).
  nlohmann::json summary(comm::Communicator& comm) const;

 private:
  /// The running total of a phase (a reference stays valid as phases are added).
  double& total(std::string_view phase) {
    const auto it = seconds_.find(phase);
    return it != seconds_.end() ? it->second : seconds_.emplace(phase, 0.0).first->second;
  }

  bool fenced_;
  std::map<std::string, double, std::less<>> seconds_;  // by name, found without a copy
};

}  // namespace minisgd
