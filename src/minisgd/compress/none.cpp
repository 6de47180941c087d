#include "minisgd/compress/none.hpp"

#include "minisgd/comm/view_collectives.hpp"

namespace minisgd::compress {

template <class T>
void Dense<T>::reduce(const Vector<T>& local, const Vector<T>& sum) {
  Kokkos::deep_copy(sum, local);
  comm::allreduce(comm_, sum);
}

template class Dense<float>;
template class Dense<double>;

}  // namespace minisgd::compress
