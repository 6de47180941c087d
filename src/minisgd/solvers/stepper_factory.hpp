#pragma once
// The method a deck asks for, over data stored as S.
#include <memory>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/config/config.hpp"
#include "minisgd/data/dataset.hpp"
#include "minisgd/report/timers.hpp"
#include "minisgd/solvers/stepper.hpp"

namespace minisgd {

/// SgdStepper<S, A> for sgd, CaSgdStepper<S, A> for ca-sgd: S the storage of the data, A the
/// arithmetic type of the plan as realized once after the deck was read
/// (c.precision.realized.compute).
template <class S>
std::unique_ptr<Stepper> make_stepper(const Config& c, const Dataset<S>& data,
                                      comm::Communicator& comm, Timers& timers);

}  // namespace minisgd
