#include "minisgd/compress/none.hpp"

#include <nlohmann/json.hpp>

#include "minisgd/comm/view_collectives.hpp"
#include "minisgd/compress/record.hpp"

namespace minisgd::compress {

template <class T>
void Dense<T>::reduce(const Vector<T>& local, const Vector<T>& sum) {
  // On the default instance's stream: the plain deep_copy fences before and after (Kokkos 4),
  // two waits for the device a step where one rank's reduction is the identity. The
  // AllReduce itself fences where it must read the copy (comm/view_collectives.hpp).
  Kokkos::deep_copy(ExecSpace(), sum, local);
  comm::allreduce(comm_, sum);
}

template <class T>
nlohmann::json Dense<T>::describe() const {
  return {{"method", "none"}};
}

template class Dense<float>;
template class Dense<double>;

namespace {

/// What the layers above the deck know of compression.method: none (record.hpp).
struct NoneMethod {
  template <class T>
  static std::unique_ptr<Compressor<T>> make(const CompressionConfig&, const Setup& s) {
    return std::make_unique<Dense<T>>(s.comm);
  }

  static std::vector<Collective> traffic(const CompressionConfig&, const Exchange& e) {
    return {Collective::allreduce(e.value_bytes * e.d)};
  }

  static double bytes_held(const CompressionConfig&, const Exchange&) { return 0; }

  static constexpr bool merges = false;
};

}  // namespace

const CompressorRecord none_record = record_of<NoneMethod>();

}  // namespace minisgd::compress
