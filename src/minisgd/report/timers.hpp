#pragma once
// Per-phase wall-clock timers. Each interval is fenced at both ends so asynchronous kernels
// are charged to the phase that launched them.
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/core/kokkos.hpp"

namespace minisgd {

class Timers {
 public:
  class Scope {
   public:
    Scope(Timers& t, std::string phase) : t_(t), phase_(std::move(phase)) {
      fence();
      timer_.reset();
    }
    ~Scope() {
      fence();
      t_.seconds_[phase_] += timer_.seconds();
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Timers& t_;
    std::string phase_;
    Kokkos::Timer timer_;
  };

  Scope scope(const std::string& phase) { return Scope(*this, phase); }
  double seconds(const std::string& phase) const;

  /// {phase: {min, mean, max}} over the ranks of `comm` (collective: every rank must call
  /// with the same phases).
  nlohmann::json summary(comm::Communicator& comm) const;

 private:
  std::map<std::string, double> seconds_;
};

}  // namespace minisgd
