#include "minisgd/compress/aps.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

#include "minisgd/comm/merge_allreduce.hpp"
#include "minisgd/compress/host/codec_run.hpp"
#include "minisgd/compress/record.hpp"

namespace minisgd::compress {

namespace aps_detail {

// The host form: plain loops over a block's values, and over elements with the packing's shape
// a compile-time constant (aps::with_shape), which the compiler vectorizes, in the active
// tier's instructions (compress/host/codec_loops.hpp); the team kernels of the device path run
// a branch per value on run-time shapes (10 ns a value on a CPU). The same codes, merges and
// sums, value for value (form.hpp).

constexpr std::size_t kChunk = 4096;  // elements of a merge that one host thread takes

/// values[c] = decode(c, f) for every code of f (the host form's table; none for the device's).
std::vector<float> code_values(precision::CustomFormat f, Form form) {
  std::vector<float> values(form == Form::host ? std::size_t(1) << f.bits() : 0);
  for (std::size_t c = 0; c < values.size(); ++c)
    values[c] = precision::decode(std::uint32_t(c), f);
  return values;
}

}  // namespace aps_detail

template <class T>
Aps<T>::Aps(comm::Communicator& comm, std::size_t d, const std::string& format,
            std::size_t block_size, bool kahan, Form form, bool scaling)
    : comm_(comm),
      d_(d),
      form_(checked(form)),
      format_name_(format),
      format_(aps::wire_format(format)),
      block_size_(block_size),
      packing_(aps::Packing::of(format_, kahan)),
      headroom_(aps::headroom_bits(format_, comm.size())),
      scaling_(scaling),
      exponents_("aps_exponents", (d + block_size - 1) / block_size),
      payload_("aps_payload", packing_.elements(d) * packing_.element_bytes()),
      codes_(form_ == Form::host && packing_.per_word == 2 ? d : 0),
      values_(aps_detail::code_values(format_, form_)) {
  if (scaling_) return;
  // Without scaling every block takes the exponent whose shift is 0, once: the codes are the
  // values' own, and small gradients fall below the format's range (what APS's scaling avoids).
  std::fill(exponents_.host.data(), exponents_.host.data() + exponents_.size(),
            std::int16_t(format_.bias() - headroom_));
  exponents_.to_device();
}

template <class T>
nlohmann::json Aps<T>::describe() const {
  return {
      {"method", "aps"},           {"format", format_name_},       {"code_bits", format_.bits()},
      {"block_size", block_size_}, {"kahan", packing_.lanes == 2}, {"headroom_bits", headroom_},
      {"scaling", scaling_}};
}

template <class T>
void Aps<T>::reduce(const Vector<T>& local, const Vector<T>& sum) {
  if (kHostMemory && form_ == Form::host)
    reduce_on_host(local, sum);
  else
    reduce_on_device(local, sum);
}

template <class T>
void Aps<T>::reduce_on_device(const Vector<T>& local, const Vector<T>& sum) {
  using Team = Kokkos::TeamPolicy<ExecSpace>::member_type;
  const std::size_t d = d_, block = block_size_;
  const int ranks = comm_.size();
  const auto exps = exponents_.device;
  if (scaling_) {
    Kokkos::parallel_for(
        "minisgd::aps_block_exponents", Kokkos::TeamPolicy<ExecSpace>(exps.extent(0), Kokkos::AUTO),
        KOKKOS_LAMBDA(const Team& team) {
          const std::size_t first = team.league_rank() * block;
          const std::size_t n = kmin(block, d - first);
          float m = 0;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(team, n),
              [&](const std::size_t j, float& acc) {
                const float v = float(local(first + j));
                acc = kmax(acc, v < 0 ? -v : v);
              },
              Kokkos::Max<float>(m));
          Kokkos::single(Kokkos::PerTeam(team),
                         [&]() { exps(team.league_rank()) = aps::block_exponent(m, ranks); });
        });
    comm_.allreduce(exponents_.to_host(), exponents_.size(), comm::Op::max);
    exponents_.to_device();
  }

  // Encode and decode: a team per block, so a value's exponent is its team's (no division per
  // value). With two codes to a byte an element whose second value opens the next block belongs
  // to the team of its first value.
  const precision::CustomFormat f = format_;
  const aps::Packing p = packing_;
  const int headroom = headroom_;
  const auto payload = payload_.device;
  const std::size_t per_word = std::size_t(p.per_word);
  Kokkos::parallel_for(
      "minisgd::aps_encode", Kokkos::TeamPolicy<ExecSpace>(exps.extent(0), Kokkos::AUTO),
      KOKKOS_LAMBDA(const Team& team) {
        const std::size_t l = team.league_rank(), end = kmin((l + 1) * block, d);
        const std::size_t first = (l * block + per_word - 1) / per_word;  // elements of block l
        const std::size_t last = (end + per_word - 1) / per_word;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, first, last), [&](const std::size_t e) {
          std::uint32_t codes[2] = {0, 0}, zeros[2] = {0, 0};
          for (std::size_t j = 0; j < per_word; ++j) {
            const std::size_t i = e * per_word + j;
            if (i >= d) break;
            const std::int16_t x = i < end ? exps(l) : exps(l + 1);
            if (x != aps::zero_block)
              codes[j] = aps::encode_scaled(float(local(i)), aps::block_shift(f, headroom, x), f);
          }
          std::uint8_t* element = &payload(e * p.element_bytes());
          p.put(element, 0, codes);
          if (p.lanes == 2) p.put(element, 1, zeros);
        });
      });
  comm::merge_allreduce(comm_, comm::MergeShape::elementwise, payload_.to_host(), p.elements(d),
                        p.element_bytes(),
                        [p, f](std::uint8_t* own, const std::uint8_t* received, std::size_t,
                               std::size_t n, const comm::PlanStep&) {
                          const std::size_t bytes = p.element_bytes();
                          host_for("minisgd::aps_merge", n, [=](std::size_t e) {
                            aps::merge_element(p, f, own + e * bytes, received + e * bytes);
                          });
                        });
  payload_.to_device();
  Kokkos::parallel_for(
      "minisgd::aps_decode", Kokkos::TeamPolicy<ExecSpace>(exps.extent(0), Kokkos::AUTO),
      KOKKOS_LAMBDA(const Team& team) {
        const std::size_t l = team.league_rank(), first = l * block, end = kmin(first + block, d);
        const std::int16_t e = exps(l);
        const int shift = e == aps::zero_block ? 0 : aps::block_shift(f, headroom, e);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, first, end), [&](const std::size_t i) {
          if (e == aps::zero_block) {
            sum(i) = T(0);
            return;
          }
          const std::size_t element = per_word == 1 ? i : i / 2;
          sum(i) = T(aps::unscale(aps::element_value(p, f, &payload(element * p.element_bytes()),
                                                     int(i - element * per_word)),
                                  shift));
        });
      });
}

template <class T>
void Aps<T>::reduce_on_host(const Vector<T>& local, const Vector<T>& sum) {
  const codec::CodecKernels<T>* const k = &codec::active_codec<T>();
  const std::size_t d = d_, block = block_size_;
  const int ranks = comm_.size();
  std::int16_t* const exps = exponents_.host.data();
  std::uint8_t* const payload = payload_.host.data();
  std::uint32_t* const codes = codes_.data();
  const T* const g = local.data();
  T* const out = sum.data();
  const std::int64_t blocks = std::int64_t((d + block - 1) / block);
  const std::int64_t per_chunk = std::int64_t(kmax(std::size_t(1), aps_detail::kChunk / block));
  if (scaling_) {
    codec::for_chunks(
        "minisgd::aps_block_exponents", blocks,
        [=](std::int64_t l0, std::int64_t l1) {
          k->aps_exponents(g, d, block, ranks, exps, l0, l1);
        },
        per_chunk);
    comm_.allreduce(exps, exponents_.size(), comm::Op::max);
  }
  const codec::ApsCall a{format_, values_.data(), packing_, headroom_, d, block, exps};
  codec::for_chunks(
      "minisgd::aps_encode", blocks,
      [=](std::int64_t l0, std::int64_t l1) { k->aps_encode(a, g, payload, codes, l0, l1); },
      per_chunk);
  if (packing_.per_word == 2)
    codec::for_chunks(
        "minisgd::aps_pack", std::int64_t((d + 1) / 2),
        [=](std::int64_t e0, std::int64_t e1) { k->aps_pack(a, codes, payload, e0, e1); },
        std::int64_t(aps_detail::kChunk));
  comm::merge_allreduce(
      comm_, comm::MergeShape::elementwise, payload, packing_.elements(d), packing_.element_bytes(),
      [k, a](std::uint8_t* own, const std::uint8_t* received, std::size_t, std::size_t n,
             const comm::PlanStep&) {
        codec::for_chunks(
            "minisgd::aps_merge", std::int64_t(n),
            [=](std::int64_t e0, std::int64_t e1) { k->aps_merge(a, own, received, e0, e1); },
            std::int64_t(aps_detail::kChunk));
      });
  codec::for_chunks(
      "minisgd::aps_decode", blocks,
      [=](std::int64_t l0, std::int64_t l1) { k->aps_decode(a, payload, out, l0, l1); }, per_chunk);
}

template class Aps<float>;
template class Aps<double>;

namespace {

/// What the layers above the deck know of compression.method: aps (record.hpp).
struct ApsMethod {
  template <class T>
  static std::unique_ptr<Compressor<T>> make(const CompressionConfig& c, const Setup& s) {
    return std::make_unique<Aps<T>>(s.comm, s.d, c.aps.format, std::size_t(c.aps.block_size),
                                    c.aps.kahan, s.form, c.aps.scaling);
  }

  /// The blocks' exponents (unless unscaled), then the codes' merge.
  static std::vector<Collective> traffic(const CompressionConfig& c, const Exchange& e) {
    const aps::Packing pack = aps::Packing::of(aps::wire_format(c.aps.format), c.aps.kahan);
    std::vector<Collective> out{
        Collective::merge(comm::MergeShape::elementwise, double(pack.elements(std::size_t(e.d))),
                          double(pack.element_bytes()), double(pack.per_word))};
    if (c.aps.scaling)
      out.insert(out.begin(), Collective::allreduce(2 * std::ceil(e.d / double(c.aps.block_size))));
    return out;
  }

  /// The payload, 8 bits a value or more.
  static double bytes_held(const CompressionConfig&, const Exchange& e) { return e.d; }

  static constexpr bool merges = true;
};

}  // namespace

const CompressorRecord aps_record = record_of<ApsMethod>();

}  // namespace minisgd::compress
