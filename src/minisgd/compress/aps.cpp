#include "minisgd/compress/aps.hpp"

#include "minisgd/comm/merge_allreduce.hpp"

namespace minisgd::compress {

template <class T>
Aps<T>::Aps(comm::Communicator& comm, std::size_t d, const std::string& format,
            std::size_t block_size, bool kahan)
    : comm_(comm),
      d_(d),
      format_name_(format),
      format_(aps::wire_format(format)),
      block_size_(block_size),
      packing_(aps::Packing::of(format_, kahan)),
      headroom_(aps::headroom_bits(format_, comm.size())),
      exponents_("aps_exponents", (d + block_size - 1) / block_size),
      payload_("aps_payload", packing_.elements(d) * packing_.element_bytes()) {}

template <class T>
nlohmann::json Aps<T>::describe() const {
  return {
      {"method", "aps"},           {"format", format_name_},       {"code_bits", format_.bits()},
      {"block_size", block_size_}, {"kahan", packing_.lanes == 2}, {"headroom_bits", headroom_}};
}

template <class T>
void Aps<T>::reduce(const Vector<T>& local, const Vector<T>& sum) {
  using Team = Kokkos::TeamPolicy<ExecSpace>::member_type;
  const std::size_t d = d_, block = block_size_;
  const int ranks = comm_.size();
  const auto exps = exponents_.device;
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

template class Aps<float>;
template class Aps<double>;

}  // namespace minisgd::compress
