#include "minisgd/compress/cast.hpp"

#include <nlohmann/json.hpp>

#include "minisgd/comm/merge_allreduce.hpp"
#include "minisgd/compress/record.hpp"
#include "minisgd/precision/storage_types.hpp"

namespace minisgd::compress {

template <class T>
Cast<T>::Cast(comm::Communicator& comm, std::size_t d, CastFormat format)
    : comm_(comm), format_(format), payload_("cast_payload", d) {}

template <class T>
nlohmann::json Cast<T>::describe() const {
  return {{"method", "cast"}, {"format", to_string(format_)}};
}

template <class T>
void Cast<T>::reduce(const Vector<T>& local, const Vector<T>& sum) {
  if (format_ == CastFormat::bf16)
    reduce_as<precision::bf16>(local, sum);
  else
    reduce_as<precision::fp16>(local, sum);
}

template <class T>
template <class F>
void Cast<T>::reduce_as(const Vector<T>& local, const Vector<T>& sum) {
  const auto codes = payload_.device;
  Kokkos::parallel_for(
      "minisgd::cast_encode", Kokkos::RangePolicy<ExecSpace>(0, codes.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i) {
        codes(i) = precision::from_float<F>(float(local(i))).bits;
      });
  comm::merge_allreduce(
      comm_, comm::MergeShape::elementwise, reinterpret_cast<std::uint8_t*>(payload_.to_host()),
      payload_.size(), sizeof(std::uint16_t),
      [](std::uint8_t* own, const std::uint8_t* received, std::size_t, std::size_t n,
         const comm::PlanStep&) {
        auto* a = reinterpret_cast<std::uint16_t*>(own);
        const auto* b = reinterpret_cast<const std::uint16_t*>(received);
        host_for("minisgd::cast_merge", n, [=](std::size_t i) {
          a[i] =
              precision::from_float<F>(precision::to_float(F{a[i]}) + precision::to_float(F{b[i]}))
                  .bits;
        });
      });
  payload_.to_device();
  Kokkos::parallel_for(
      "minisgd::cast_decode", Kokkos::RangePolicy<ExecSpace>(0, codes.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i) { sum(i) = T(precision::to_float(F{codes(i)})); });
}

template class Cast<float>;
template class Cast<double>;

namespace {

/// What the layers above the deck know of compression.method: cast (record.hpp).
struct CastMethod {
  template <class T>
  static std::unique_ptr<Compressor<T>> make(const CompressionConfig& c, const Setup& s) {
    return std::make_unique<Cast<T>>(s.comm, s.d, c.cast.format);
  }

  static std::vector<Collective> traffic(const CompressionConfig&, const Exchange& e) {
    return {Collective::merge(comm::MergeShape::elementwise, e.d, 2)};
  }

  /// The 16-bit payload.
  static double bytes_held(const CompressionConfig&, const Exchange& e) { return 2 * e.d; }

  static constexpr bool merges = true;
};

}  // namespace

const CompressorRecord cast_record = record_of<CastMethod>();

}  // namespace minisgd::compress
