#include "minisgd/solvers/stepper_factory.hpp"

#include <stdexcept>
#include <type_traits>

#include "minisgd/precision/dispatch.hpp"
#include "minisgd/solvers/ca_sgd.hpp"
#include "minisgd/solvers/sgd.hpp"

namespace minisgd {

template <class S>
std::unique_ptr<Stepper> make_stepper(const Config& c, const Dataset<S>& data,
                                      comm::Communicator& comm, Timers& timers) {
  // A, the arithmetic type, as the plan was realized after the deck was read.
  return precision::with_arithmetic_type(
      c.precision.realized.compute, [&](auto tag) -> std::unique_ptr<Stepper> {
        using A = typename decltype(tag)::type;
        if (c.solver.method == Method::ca_sgd)
          return std::make_unique<CaSgdStepper<S, A>>(c, data, comm, timers);
        if constexpr (std::is_same_v<S, double> && !std::is_same_v<A, double>)
          throw std::logic_error(
              "sgd with fp64 data computes in fp64 (the deck reader enforces it)");
        else
          return std::make_unique<SgdStepper<S, A>>(c, data, comm, timers);
      });
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
