#pragma once
// Per-phase wall-clock timers, each phase also a Kokkos Tools region "minisgd::<phase>".
// Fenced (output.phase_timers: true): each interval is fenced at both ends, so asynchronous
// kernels are charged to the phase that launched them, at the price of fences inside the
// measured time. Unfenced (the default): host wall time from entering to leaving the phase,
// exact on host backends, launch time plus the phase's own waits on a device.
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/profiling.hpp"

namespace minisgd {

class Timers {
 public:
  class Scope {
   public:
    Scope(Timers& t, std::string phase)
        : t_(t), phase_(std::move(phase)), region_("minisgd::" + phase_) {
      if (t_.fenced_) fence("phase timer");
      timer_.reset();
    }
    ~Scope() {
      if (t_.fenced_) fence("phase timer");
      t_.seconds_[phase_] += timer_.seconds();
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Timers& t_;
    std::string phase_;
    Region region_;
    Kokkos::Timer timer_;
  };

  explicit Timers(bool fenced = false) : fenced_(fenced) {}
  bool fenced() const { return fenced_; }

  Scope scope(const std::string& phase) { return Scope(*this, phase); }
  double seconds(const std::string& phase) const;

  /// {phase: {min, mean, max}} over the ranks of `comm` (collective: every rank must call
  /// with the same phases).
  nlohmann::json summary(comm::Communicator& comm) const;

 private:
  bool fenced_;
  std::map<std::string, double> seconds_;
};

}  // namespace minisgd
