#pragma once
// The method a deck asks for, over data stored as S.
#include <memory>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/config/config.hpp"
#include "minisgd/data/dataset.hpp"
#include "minisgd/report/timers.hpp"
#include "minisgd/solvers/stepper.hpp"

namespace minisgd {

/// SgdStepper<S> for sgd (S = float or double), CaSgdStepper<S, A> for ca-sgd with A the
/// plan's arithmetic type.
template <class S>
std::unique_ptr<Stepper> make_stepper(const Config& c, const Dataset<S>& data,
                                      comm::Communicator& comm, Timers& timers);

}  // namespace minisgd
