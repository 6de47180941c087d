// CaSgdStepper for fp64 and fp32 storage (its definitions: solvers/ca_sgd_impl.hpp).
#include "minisgd/solvers/ca_sgd_impl.hpp"

namespace minisgd {

template class CaSgdStepper<double, double>;
template class CaSgdStepper<double, float>;
template class CaSgdStepper<float, double>;
template class CaSgdStepper<float, float>;

}  // namespace minisgd
