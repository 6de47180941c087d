#include "minisgd/compress/none.hpp"

#include "minisgd/comm/view_collectives.hpp"

namespace minisgd::compress {

template <class T>
void Dense<T>::reduce(const Vector<T>& local, const Vector<T>& sum) {
  // On the default instance's stream: the plain deep_copy fences before and after (Kokkos 4),
  // two waits for the device a step where one rank's reduction is the identity. The
  // AllReduce itself fences where it must read the copy (comm/view_collectives.hpp).
  Kokkos::deep_copy(ExecSpace(), sum, local);
  comm::allreduce(comm_, sum);
}

template class Dense<float>;
template class Dense<double>;

}  // namespace minisgd::compress
