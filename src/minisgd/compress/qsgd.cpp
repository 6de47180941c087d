#include "minisgd/compress/qsgd.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "minisgd/compress/dithering.hpp"
#include "minisgd/compress/record.hpp"
#include "minisgd/core/ordered_sum.hpp"

namespace minisgd::compress {

namespace qsgd_detail {

/// What a code stands for, before its rank's unit: exponential dithering's ±2^−k, or the level.
/// (A function, not an `if constexpr` in the kernel: CUDA's device lambdas may not first capture
/// a variable inside one.)
template <bool kExponential, class Code>
KOKKOS_INLINE_FUNCTION double code_value(Code c) {
  if constexpr (kExponential)
    return double(exp_dither::decode(c));
  else
    return double(c);
}

/// sum(i) = Σ_p decode(rank p's code i)·unit_p in rank order, the codes gathered rank after rank
/// (d each): exponential dithering's bytes (unit_p = 2·scale_p), else integer levels (unit_p =
/// scale_p / levels). The code's type and kind are compile-time: no branch per element.
template <bool kExponential, class Code, class T>
void decode_sum(Form form, const std::uint8_t* gathered,
                const Kokkos::View<double*, MemSpace>& scales, std::size_t d, double levels,
                const Vector<T>& sum) {
  const Code* const codes = reinterpret_cast<const Code*>(gathered);
  const int ranks = int(scales.extent(0));
  if constexpr (kHostMemory) {
    if (form == Form::host) {  // the active tier's loop (compress/host/codec_kernels.hpp)
      const codec::CodecKernels<T>* const k = &codec::active_codec<T>();
      const double* const units = scales.data();
      T* const out = sum.data();
      codec::for_chunks("minisgd::qsgd_decode", std::int64_t(d),
                        [=](std::int64_t i0, std::int64_t i1) {
                          if constexpr (kExponential)
                            k->sum_exp(codes, units, ranks, std::int64_t(d), levels, i0, i1, out);
                          else if constexpr (sizeof(Code) == 1)
                            k->sum_i8(codes, units, ranks, std::int64_t(d), levels, i0, i1, out);
                          else
                            k->sum_i16(codes, units, ranks, std::int64_t(d), levels, i0, i1, out);
                        });
      return;
    }
  }
  Kokkos::parallel_for(
      "minisgd::qsgd_decode", Kokkos::RangePolicy<ExecSpace>(0, d),
      KOKKOS_LAMBDA(const std::int64_t i) {
        double s = 0;
        for (int p = 0; p < ranks; ++p)
          s += code_value<kExponential>(codes[p * d + i]) *
               (kExponential ? 2 * scales(p) : scales(p) / levels);
        sum(i) = T(s);
      });
}

}  // namespace qsgd_detail

template <class T>
Qsgd<T>::Qsgd(comm::Communicator& comm, std::size_t d, int bits, bool exponential,
              std::uint64_t seed, Form form)
    : comm_(comm),
      d_(d),
      form_(checked(form)),
      bits_(bits),
      exponential_(exponential),
      seed_(seed),
      code_bytes_(exponential || bits <= 8 ? 1 : 2),
      codes_("qsgd_codes", d * code_bytes_),
      gathered_("qsgd_gathered", d * code_bytes_ * comm.size()),
      scales_("qsgd_scales", comm.size()) {}

template <class T>
nlohmann::json Qsgd<T>::describe() const {
  return {{"method", "qsgd"},
          {"bits", bits_},
          {"dithering", exponential_ ? "exponential" : "standard"},
          {"code_bytes", code_bytes_}};
}

template <class T>
void Qsgd<T>::reduce(const Vector<T>& local, const Vector<T>& sum) {
  // A fixed summation order, so the scale (and every code) is the same for any thread count.
  // A NaN or ∞ makes the scale non-finite and the decoded sum NaN (codes times the scale).
  const double norm2 = ordered_sum(
      "minisgd::qsgd_norm", std::int64_t(d_),
      KOKKOS_LAMBDA(const std::int64_t i) { return double(local(i)) * double(local(i)); });
  const double scale = std::sqrt(norm2);
  const double levels = double((1 << (bits_ - 1)) - 1);
  const std::uint64_t key = stream_key(seed_, 0), step = step_;
  const std::uint64_t first = std::uint64_t(comm_.rank()) * d_;
  const auto codes = codes_.device;
  if (exponential_) {
    encode_exponential<false>("minisgd::qsgd_encode_exponential", form_, local,
                              scale > 0 ? 1.0 / (2 * scale) : 0.0, key, step, first, codes.data());
  } else {
    encode_levels(form_, local, scale > 0 ? levels / scale : 0.0, int(levels), key, step, first,
                  code_bytes_, codes.data());
  }
  comm_.allgather(&scale, scales_.host.data(), 1);
  comm_.allgather(codes_.to_host(), gathered_.host.data(), codes_.size(), comm::DType::u8);
  scales_.to_device();
  gathered_.to_device();
  const std::uint8_t* const gathered = gathered_.device.data();
  if (exponential_)
    qsgd_detail::decode_sum<true, std::uint8_t>(form_, gathered, scales_.device, d_, levels, sum);
  else if (code_bytes_ == 1)
    qsgd_detail::decode_sum<false, std::int8_t>(form_, gathered, scales_.device, d_, levels, sum);
  else
    qsgd_detail::decode_sum<false, std::int16_t>(form_, gathered, scales_.device, d_, levels, sum);
  ++step_;
}

template class Qsgd<float>;
template class Qsgd<double>;

namespace {

/// What the layers above the deck know of compression.method: qsgd (record.hpp).
struct QsgdMethod {
  template <class T>
  static std::unique_ptr<Compressor<T>> make(const CompressionConfig& c, const Setup& s) {
    return std::make_unique<Qsgd<T>>(s.comm, s.d, c.qsgd.bits,
                                     c.qsgd.dithering == Dithering::exponential, s.seed, s.form);
  }

  /// Every rank's scale, then every rank's codes.
  static std::vector<Collective> traffic(const CompressionConfig& c, const Exchange& e) {
    return {Collective::allgather(8), Collective::allgather(std::ceil(c.qsgd.bits / 8.0) * e.d)};
  }

  /// The codes, and every rank's gathered.
  static double bytes_held(const CompressionConfig& c, const Exchange& e) {
    const bool one_byte = c.qsgd.dithering == Dithering::exponential || c.qsgd.bits <= 8;
    return (one_byte ? 1 : 2) * e.d * (1 + double(e.ranks));
  }

  static constexpr bool merges = false;
};

}  // namespace

const CompressorRecord qsgd_record = record_of<QsgdMethod>();

}  // namespace minisgd::compress
