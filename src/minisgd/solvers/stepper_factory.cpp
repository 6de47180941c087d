#include "minisgd/solvers/stepper_factory.hpp"

#include <stdexcept>
#include <type_traits>

#include "minisgd/solvers/ca_sgd.hpp"
#include "minisgd/solvers/sgd.hpp"

namespace minisgd {

template <class S>
std::unique_ptr<Stepper> make_stepper(const Config& c, const Dataset<S>& data,
                                      comm::Communicator& comm, Timers& timers) {
  const bool fp64 = precision::realize(c.precision.plan).compute == precision::Format::fp64;
  if (c.solver.method == Method::sgd) {
    if (fp64) return std::make_unique<SgdStepper<S, double>>(c, data, comm, timers);
    if constexpr (!std::is_same_v<S, double>)
      return std::make_unique<SgdStepper<S, float>>(c, data, comm, timers);
    throw std::logic_error("sgd with fp64 data computes in fp64 (the deck reader enforces it)");
  }
  if (fp64) return std::make_unique<CaSgdStepper<S, double>>(c, data, comm, timers);
  return std::make_unique<CaSgdStepper<S, float>>(c, data, comm, timers);
}

template std::unique_ptr<Stepper> make_stepper(const Config&, const Dataset<double>&,
                                               comm::Communicator&, Timers&);
template std::unique_ptr<Stepper> make_stepper(const Config&, const Dataset<float>&,
                                               comm::Communicator&, Timers&);
template std::unique_ptr<Stepper> make_stepper(const Config&, const Dataset<precision::bf16>&,
                                               comm::Communicator&, Timers&);
template std::unique_ptr<Stepper> make_stepper(const Config&, const Dataset<precision::fp16>&,
                                               comm::Communicator&, Timers&);

}  // namespace minisgd
