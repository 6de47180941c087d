#include "minisgd/compress/cast.hpp"

#include <nlohmann/json.hpp>

#include "minisgd/comm/merge_allreduce.hpp"
#include "minisgd/compress/host/codec_run.hpp"
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
  // On the host, the active tier's loops (compress/host/codec_kernels.hpp): the conversions
  // (fp16's a software routine below F16C) in the widest instructions the CPU has.
  constexpr bool bf = std::is_same_v<F, precision::bf16>;
  const codec::CodecKernels<T>* const k = &codec::active_codec<T>();
  const auto codes = payload_.device;
  if constexpr (kHostMemory) {
    const T* const x = local.data();
    std::uint16_t* const out = codes.data();
    codec::for_chunks("minisgd::cast_encode", std::int64_t(codes.extent(0)),
                      [=](std::int64_t i0, std::int64_t i1) {
                        (bf ? k->cast_bf16 : k->cast_fp16)(x, i0, i1, out);
                      });
  } else {
    Kokkos::parallel_for(
        "minisgd::cast_encode", Kokkos::RangePolicy<ExecSpace>(0, codes.extent(0)),
        KOKKOS_LAMBDA(const std::int64_t i) {
          codes(i) = precision::from_float<F>(float(local(i))).bits;
        });
  }
  comm::merge_allreduce(comm_, comm::MergeShape::elementwise,
                        reinterpret_cast<std::uint8_t*>(payload_.to_host()), payload_.size(),
                        sizeof(std::uint16_t),
                        [k](std::uint8_t* own, const std::uint8_t* received, std::size_t,
                            std::size_t n, const comm::PlanStep&) {
                          auto* a = reinterpret_cast<std::uint16_t*>(own);
                          const auto* b = reinterpret_cast<const std::uint16_t*>(received);
                          codec::for_chunks("minisgd::cast_merge", std::int64_t(n),
                                            [=](std::int64_t i0, std::int64_t i1) {
                                              (bf ? k->merge_bf16 : k->merge_fp16)(a, b, i0, i1);
                                            });
                        });
  payload_.to_device();
  if constexpr (kHostMemory) {
    const std::uint16_t* const in = codes.data();
    T* const out = sum.data();
    codec::for_chunks("minisgd::cast_decode", std::int64_t(codes.extent(0)),
                      [=](std::int64_t i0, std::int64_t i1) {
                        (bf ? k->widen_bf16 : k->widen_fp16)(in, i0, i1, out);
                      });
  } else {
    Kokkos::parallel_for(
        "minisgd::cast_decode", Kokkos::RangePolicy<ExecSpace>(0, codes.extent(0)),
        KOKKOS_LAMBDA(const std::int64_t i) { sum(i) = T(precision::to_float(F{codes(i)})); });
  }
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
