#include "minisgd/compress/topk.hpp"

namespace minisgd::compress {

template <class T>
TopK<T>::TopK(comm::Communicator& comm, std::size_t d, double density, Form form)
    : comm_(comm),
      form_(checked(form)),
      density_(density),
      local_(d, density),
      gathered_("topk_gathered", top_k_count(d, density) * comm.size()) {}

template <class T>
nlohmann::json TopK<T>::describe() const {
  return {{"method", "topk"}, {"density", density_}, {"k", k()}};
}

template <class T>
void TopK<T>::reduce(const Vector<T>& local, const Vector<T>& sum) {
  const IndexValue* selected = local_.select(local, form_);
  local_.keep_unsent(local_.selection.device);
  const std::size_t k = local_.k();
  comm_.allgather(selected, gathered_.host.data(), k * sizeof(IndexValue), comm::DType::u8);
  gathered_.to_device();
  Kokkos::deep_copy(sum, T(0));
  for (int p = 0; p < comm_.size(); ++p)  // rank by rank: indices repeat across ranks
    scatter_add(Kokkos::subview(gathered_.device, Kokkos::make_pair(p * k, (p + 1) * k)), sum);
}

template class TopK<float>;
template class TopK<double>;

}  // namespace minisgd::compress
