#include "minisgd/compress/topk.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "minisgd/compress/record.hpp"

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

namespace {

/// What the layers above the deck know of compression.method: topk (record.hpp).
struct TopKMethod {
  template <class T>
  static std::unique_ptr<Compressor<T>> make(const CompressionConfig& c, const Setup& s) {
    return std::make_unique<TopK<T>>(s.comm, s.d, c.topk.density, s.form);
  }

  static std::vector<Collective> traffic(const CompressionConfig& c, const Exchange& e) {
    return {Collective::allgather(8.0 * double(top_k_count(std::size_t(e.d), c.topk.density)))};
  }

  /// The residual, accumulated gradient and 32-bit keys; k pairs, and P·k gathered.
  static double bytes_held(const CompressionConfig& c, const Exchange& e) {
    const double k = std::max(1.0, std::ceil(c.topk.density * e.d));
    return (2 * e.value_bytes + 4) * e.d + 8 * k * (1 + double(e.ranks));
  }

  static constexpr bool merges = false;
};

}  // namespace

const CompressorRecord topk_record = record_of<TopKMethod>();

}  // namespace minisgd::compress
