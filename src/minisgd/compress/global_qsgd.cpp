#include "minisgd/compress/global_qsgd.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "minisgd/comm/merge_allreduce.hpp"
#include "minisgd/compress/dithering.hpp"
#include "minisgd/compress/host/codec_run.hpp"
#include "minisgd/compress/magnitude.hpp"
#include "minisgd/compress/record.hpp"
#include "minisgd/precision/bit_rounding.hpp"

namespace minisgd::compress {

namespace {
/// own[i] += received[i] for n integer codes of type I (unaligned bytes).
template <class I>
void add_codes(std::uint8_t* own, const std::uint8_t* received, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    I a, b;
    std::memcpy(&a, own + i * sizeof(I), sizeof(I));
    std::memcpy(&b, received + i * sizeof(I), sizeof(I));
    a = I(a + b);
    std::memcpy(own + i * sizeof(I), &a, sizeof(I));
  }
}
}  // namespace

GlobalLevels GlobalLevels::of(int bits, int ranks) {
  const long long per_rank = ((1ll << (bits - 1)) - 1) / ranks;
  const long long levels = per_rank < 1 ? 1 : per_rank;
  const long long most = levels * ranks;
  int bytes = most <= INT8_MAX ? 1 : most <= INT16_MAX ? 2 : most <= INT32_MAX ? 4 : 0;
  if (bytes == 0) throw std::invalid_argument("global-qsgd: too many ranks for 32-bit sums");
  return {int(levels), bytes};
}

template <class T>
GlobalQsgd<T>::GlobalQsgd(comm::Communicator& comm, std::size_t d, int bits, bool exponential,
                          std::uint64_t seed, Form form)
    : comm_(comm),
      d_(d),
      form_(checked(form)),
      bits_(bits),
      exponential_(exponential),
      seed_(seed),
      levels_(GlobalLevels::of(bits, comm.size())),
      codes_("global_qsgd_codes", d * (exponential ? 1 : levels_.code_bytes)) {}

template <class T>
nlohmann::json GlobalQsgd<T>::describe() const {
  nlohmann::json j = {{"method", "global-qsgd"},
                      {"bits", bits_},
                      {"dithering", exponential_ ? "exponential" : "standard"}};
  if (!exponential_) {
    j["levels_per_rank"] = levels_.levels;
    j["code_bytes"] = levels_.code_bytes;
  }
  return j;
}

/// max |local(i)|, a NaN counted as +∞ (a max drops NaN), so that every rank sees a non-finite
/// scale and the sum becomes NaN instead of finite codes. The host form takes blocks of a plain
/// loop on the bits, which vectorizes (a reduction value by value with a NaN select does not:
/// it was half of the compressor's time).
template <class T>
double largest_magnitude(Form form, const Vector<T>& local) {
  const std::int64_t d = std::int64_t(local.extent(0));
  if constexpr (kHostMemory) {
    if (form == Form::host) {
      constexpr std::int64_t kBlock = 4096;
      const T* const x = local.data();
      using Bits = decltype(magnitude_bits(T()));
      const auto max_bits = codec::active_codec<T>().max_bits;  // the active tier's loop
      Bits m = 0;
      Kokkos::parallel_reduce(
          "minisgd::global_qsgd_max",
          Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, (d + kBlock - 1) / kBlock),
          [=](const std::int64_t b, Bits& most) {
            const std::int64_t first = b * kBlock;
            most = kmax(most, max_bits(x, first, kmin(d, first + kBlock)));
          },
          Kokkos::Max<Bits>(m));
      return double(magnitude_from_bits(m));
    }
  }
  double m = 0;
  Kokkos::parallel_reduce(
      "minisgd::global_qsgd_max", Kokkos::RangePolicy<ExecSpace>(0, d),
      KOKKOS_LAMBDA(const std::int64_t i, double& most) {
        most = kmax(most, double(magnitude_from_bits(magnitude_bits(local(i)))));
      },
      Kokkos::Max<double>(m));
  return m;
}

template <class T>
void GlobalQsgd<T>::reduce(const Vector<T>& local, const Vector<T>& sum) {
  const double local_max = largest_magnitude(form_, local);
  const double scale = comm_.allreduce_value(local_max, comm::Op::max);
  if (!(scale < HUGE_VAL)) {
    Kokkos::deep_copy(sum, T(NAN));
  } else if (scale == 0) {
    Kokkos::deep_copy(sum, T(0));
  } else if (exponential_) {
    reduce_exponential(local, sum, scale);
  } else {
    reduce_levels(local, sum, scale);
  }
  ++step_;
}

template <class T>
void GlobalQsgd<T>::reduce_levels(const Vector<T>& local, const Vector<T>& sum, double scale) {
  const int bytes = levels_.code_bytes;
  encode_levels(form_, local, double(levels_.levels) / scale, levels_.levels, stream_key(seed_, 0),
                step_, std::uint64_t(comm_.rank()) * d_, bytes, codes_.device.data());
  // |Σq| ≤ P·L fits the code type by construction (GlobalLevels): the integer sum is exact in
  // any order, so it runs on the merge collective's bandwidth-optimal schedule at every P (an
  // MPI library's AllReduce may send more off powers of two: docs/compression_at_size.md).
  comm::merge_allreduce(comm_, comm::MergeShape::elementwise, codes_.to_host(), d_,
                        std::size_t(bytes),
                        [bytes](std::uint8_t* own, const std::uint8_t* received, std::size_t,
                                std::size_t n, const comm::PlanStep&) {
                          if (bytes == 1)
                            add_codes<std::int8_t>(own, received, n);
                          else if (bytes == 2)
                            add_codes<std::int16_t>(own, received, n);
                          else
                            add_codes<std::int32_t>(own, received, n);
                        });
  codes_.to_device();
  const std::uint8_t* codes = codes_.device.data();
  const double unit = scale / double(levels_.levels);
  if (kHostMemory && form_ == Form::host) {  // the active tier's loop (compress/host/)
    const codec::CodecKernels<T>* const k = &codec::active_codec<T>();
    T* const out = sum.data();
    codec::for_chunks(
        "minisgd::global_qsgd_decode", std::int64_t(d_), [=](std::int64_t i0, std::int64_t i1) {
          if (bytes == 1)
            k->decode_i8(reinterpret_cast<const std::int8_t*>(codes), unit, i0, i1, out);
          else if (bytes == 2)
            k->decode_i16(reinterpret_cast<const std::int16_t*>(codes), unit, i0, i1, out);
          else
            k->decode_i32(reinterpret_cast<const std::int32_t*>(codes), unit, i0, i1, out);
        });
    return;
  }
  Kokkos::parallel_for(
      "minisgd::global_qsgd_decode", Kokkos::RangePolicy<ExecSpace>(0, d_),
      KOKKOS_LAMBDA(const std::int64_t i) {
        sum(i) = T(double(load_level(codes, bytes, i)) * unit);
      });
}

template <class T>
void GlobalQsgd<T>::reduce_exponential(const Vector<T>& local, const Vector<T>& sum, double scale) {
  const auto codes = codes_.device;
  const double range = 2.0 * comm_.size() * scale;
  const std::uint64_t key = stream_key(seed_, 0), step = step_;
  const std::uint64_t first = std::uint64_t(comm_.rank()) * d_;
  encode_exponential<true>("minisgd::global_qsgd_encode_exponential", form_, local, range, key,
                           step, first, codes.data());
  const codec::ExpMergeKernel merge = codec::exp_merge_kernel(simd::active_tier());
  const std::uint64_t seed = seed_;
  comm::merge_allreduce(
      comm_, comm::MergeShape::elementwise, codes_.to_host(), d_, 1,
      [seed, step, merge](std::uint8_t* own, const std::uint8_t* received, std::size_t first_elem,
                          std::size_t n, const comm::PlanStep& s) {
        const std::uint64_t merge_key =
            stream_key(seed, 1 + (std::uint64_t(s.round) << 32) + std::uint64_t(s.merge_id));
        // Element i draws the bits of 2i and 2i + 1: a block's in one vectorized loop, the
        // active tier's (compress/host/codec_kernels.hpp).
        const codec::DitherStream bits{merge_key, step, first_elem};
        codec::for_chunks(
            "minisgd::exp_dither_merge", std::int64_t(n),
            [=](std::int64_t i0, std::int64_t i1) { merge(own, received, bits, i0, i1); });
      });
  codes_.to_device();
  if (kHostMemory && form_ == Form::host) {  // the active tier's loop
    const codec::CodecKernels<T>* const k = &codec::active_codec<T>();
    const std::uint8_t* const in = codes.data();
    T* const out = sum.data();
    codec::for_chunks(
        "minisgd::global_qsgd_decode_exponential", std::int64_t(d_),
        [=](std::int64_t i0, std::int64_t i1) { k->decode_exp(in, range, i0, i1, out); });
    return;
  }
  Kokkos::parallel_for(
      "minisgd::global_qsgd_decode_exponential", Kokkos::RangePolicy<ExecSpace>(0, d_),
      KOKKOS_LAMBDA(const std::int64_t i) {
        sum(i) = T(double(exp_dither::decode(codes(i))) * range);
      });
}

template class GlobalQsgd<float>;
template class GlobalQsgd<double>;

namespace {

/// What the layers above the deck know of compression.method: global-qsgd (record.hpp).
struct GlobalQsgdMethod {
  template <class T>
  static std::unique_ptr<Compressor<T>> make(const CompressionConfig& c, const Setup& s) {
    return std::make_unique<GlobalQsgd<T>>(s.comm, s.d, c.global_qsgd.bits,
                                           c.global_qsgd.dithering == Dithering::exponential,
                                           s.seed, s.form);
  }

  /// The maximum, then the codes merged element by element: summed (standard dithering) or
  /// merged by exponential dithering's rule, one byte each.
  static std::vector<Collective> traffic(const CompressionConfig& c, const Exchange& e) {
    const double code_bytes = c.global_qsgd.dithering == Dithering::exponential
                                  ? 1.0
                                  : GlobalLevels::of(c.global_qsgd.bits, e.ranks).code_bytes;
    return {Collective::allreduce(8),
            Collective::merge(comm::MergeShape::elementwise, e.d, code_bytes)};
  }

  /// Codes of one byte or more.
  static double bytes_held(const CompressionConfig&, const Exchange& e) { return e.d; }

  static constexpr bool merges = true;
};

}  // namespace

const CompressorRecord global_qsgd_record = record_of<GlobalQsgdMethod>();

}  // namespace minisgd::compress
