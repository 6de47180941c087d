#pragma once
// Per-phase wall-clock timers, each phase also a Kokkos Tools region "minisgd::<phase>".
// Fenced (output.phase_timers: true): each interval is fenced at both ends, so asynchronous
// kernels are charged to the phase that launched them, at the price of fences inside the
// measured time. Unfenced (the default): host wall time from entering to leaving the phase,
// exact on host backends, launch time plus the phase's own waits on a device. A Sequence of
// phases costs one clock read at each boundary (TickClock: the time-stamp counter where it can)
// and no allocation (a Scope, one phase, two): SGD's step on a short row is about a microsecond.
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/profiling.hpp"
#include "minisgd/core/tick_clock.hpp"

namespace minisgd {

class Timers {
 public:
  /// A phase's name: a string literal (an array, not a c_str()), so its address names it.
  class Phase {
   public:
    template <std::size_t N>
    constexpr Phase(const char (&name)[N]) : name_(name) {}  // NOLINT(google-explicit-constructor)
    const char* c_str() const { return name_; }

   private:
    const char* name_;
  };

  /// Back-to-back phases, as in a solver's step: enter(p) ends the phase entered before (if
  /// any) and starts p with one clock read; the destructor ends the last phase.
  class Sequence {
   public:
    explicit Sequence(Timers& t) : t_(t), tools_(Kokkos::Tools::profileLibraryLoaded()) {}
    ~Sequence() {
      if (total_) finish(now());
    }
    Sequence(const Sequence&) = delete;
    Sequence& operator=(const Sequence&) = delete;

    void enter(Phase phase) {
      const TickClock::Ticks t = now();
      if (total_) finish(t);
      total_ = &t_.total(phase);
      if (tools_) Kokkos::Tools::pushRegion(std::string("minisgd::") + phase.c_str());
      start_ = t;
    }

   private:
    TickClock::Ticks now() const {
      if (t_.fenced_) fence("phase timer");
      return TickClock::now();
    }
    void finish(TickClock::Ticks t) {
      *total_ += TickClock::seconds(t - start_);
      if (tools_) Kokkos::Tools::popRegion();
    }

    Timers& t_;
    bool tools_;
    double* total_ = nullptr;  // the phase entered last
    TickClock::Ticks start_ = 0;
  };

  /// One phase for the lifetime of the object: a Sequence that enters it on construction.
  class Scope {
   public:
    Scope(Timers& t, Phase phase) : phases_(t) { phases_.enter(phase); }

   private:
    Sequence phases_;
  };

  /// (Asks TickClock for its rate now, outside any phase: the first ask may wait up to 2 ms.)
  explicit Timers(bool fenced = false) : fenced_(fenced) { TickClock::seconds_per_tick(); }
  bool fenced() const { return fenced_; }

  Scope scope(Phase phase) { return Scope(*this, phase); }
  double seconds(std::string_view phase) const;

  /// {phase: {min, mean, max}} over the ranks of `comm` (collective: every rank must call
  /// with the same phases).
  nlohmann::json summary(comm::Communicator& comm) const;

 private:
  /// The running total of a phase (a reference stays valid as phases are added), found by the
  /// address of its literal before any name is compared.
  double& total(Phase phase) {
    for (const auto& [name, t] : by_address_)
      if (name == phase.c_str()) return *t;
    const std::string_view name = phase.c_str();
    const auto it = seconds_.find(name);
    double& t = it != seconds_.end() ? it->second : seconds_.emplace(name, 0.0).first->second;
    if (by_address_.size() < 64) by_address_.emplace_back(phase.c_str(), &t);
    return t;
  }

  bool fenced_;
  std::map<std::string, double, std::less<>> seconds_;  // by name, found without a copy
  std::vector<std::pair<const char*, double*>> by_address_;
};

}  // namespace minisgd
