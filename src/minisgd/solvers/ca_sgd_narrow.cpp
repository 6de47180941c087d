// CaSgdStepper for bf16 and fp16 storage (its definitions: solvers/ca_sgd_impl.hpp).
#include "minisgd/solvers/ca_sgd_impl.hpp"

namespace minisgd {

template class CaSgdStepper<precision::bf16, double>;
template class CaSgdStepper<precision::bf16, float>;
template class CaSgdStepper<precision::fp16, double>;
template class CaSgdStepper<precision::fp16, float>;

}  // namespace minisgd
