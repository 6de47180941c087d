#include "minisgd/compress/loco.hpp"

#include <cmath>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "minisgd/compress/host/codec_run.hpp"
#include "minisgd/compress/magnitude.hpp"
#include "minisgd/compress/record.hpp"

namespace minisgd::compress {
namespace {

using Bytes = Kokkos::View<std::uint8_t*, MemSpace>;
using Team = Kokkos::TeamPolicy<ExecSpace>::member_type;

/// max |v(first + t)| over t < n, NaN as +∞, reduced by the team on the bits (magnitude.hpp).
KOKKOS_INLINE_FUNCTION float team_max_abs(const Team& team, const Vector<float>& v,
                                          std::size_t first, std::size_t n) {
  std::uint32_t m = 0;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(team, n),
      [&](const std::size_t t, std::uint32_t& acc) {
        acc = kmax(acc, magnitude_bits(v(first + t)));
      },
      Kokkos::Max<std::uint32_t>(m));
  return magnitude_from_bits(m);
}

template <class Buffer>
Buffer error_buffer(const std::string& name, std::size_t values, std::size_t groups) {
  return {Vector<std::int8_t>(name + "_codes", values), Vector<float>(name + "_steps", groups)};
}

/// The group a team owns in a policy of a team per group of every chunk (league rank
/// chunk · groups + g): the chunk, the group and its values [first, first + n) in the chunk.
/// Kernels go group by group so that no value needs a division to find its group.
struct Group {
  std::size_t chunk, g, first, n;
};
KOKKOS_INLINE_FUNCTION Group group_of(const Team& team, const loco::ChunkLayout& L) {
  const std::size_t c = team.league_rank() / L.groups, g = team.league_rank() % L.groups;
  return {c, g, g * L.group, kmin(L.group, L.length - g * L.group)};
}

Kokkos::TeamPolicy<ExecSpace> groups_of(std::size_t chunks, const loco::ChunkLayout& L) {
  return Kokkos::TeamPolicy<ExecSpace>(chunks * L.groups, Kokkos::AUTO);
}

/// Adds the stored compensation error to v (chunks × layout.length values): v += deQ(e);
/// quantizes v into `payload` (chunks × layout.bytes) and replaces the compensation buffer by
/// e ← β·e + (1−β)·(v − deQ(q)), one team per group. v is overwritten with the new errors.
void compensated_quantize(const Vector<float>& v, std::size_t chunks, const loco::ChunkLayout& L,
                          float beta, const Vector<std::int8_t>& e_codes,
                          const Vector<float>& e_steps, const Bytes& payload) {
  const int levels = 1 << (L.bits - 1);
  Kokkos::parallel_for(
      "minisgd::loco_quantize", groups_of(chunks, L), KOKKOS_LAMBDA(const Team& team) {
        const Group G = group_of(team, L);
        const std::size_t c = G.chunk, g = G.g, first = G.first, n = G.n;
        const std::size_t base = c * L.length;
        std::uint8_t* chunk = &payload(c * L.bytes);
        const float e_step = e_steps(c * L.groups + g);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](const std::size_t t) {
          const std::size_t i = base + first + t;
          v(i) += float(e_codes(i)) * e_step;
        });
        team.team_barrier();
        const float step = team_max_abs(team, v, base + first, n) / float(levels);
        const std::size_t slots = (n + L.per_byte - 1) / L.per_byte;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, slots), [&](const std::size_t t) {
          int q[2] = {0, 0};
          for (int s = 0; s < L.per_byte; ++s) {
            const std::size_t j = first + t * L.per_byte + s;
            if (j >= first + n) break;
            const std::size_t i = base + j;
            q[s] = loco::quantize(v(i), step, levels);
            v(i) = loco::compensate(beta, float(e_codes(i)) * e_step, v(i),
                                    loco::dequantize(q[s], step));
          }
          L.set_codes(chunk, first + t * L.per_byte, q[0], q[1]);
        });
        team.team_barrier();
        const float new_step = team_max_abs(team, v, base + first, n) / 127.0f;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](const std::size_t t) {
          const std::size_t i = base + first + t;
          e_codes(i) = loco::error_code(v(i), new_step);
        });
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          L.set_step(chunk, g, step);
          e_steps(c * L.groups + g) = new_step;
        });
      });
}

// The host form: compress/host/codec_loops.hpp, in the active tier's instructions; work items
// of whole groups (what each group computes depends on it alone).

/// Groups that a host work item takes: about 4096 values.
std::int64_t groups_per_item(const loco::ChunkLayout& L) {
  return std::int64_t(kmax(std::size_t(1), std::size_t(4096) / L.group));
}

}  // namespace

template <class T>
Loco<T>::Loco(comm::Communicator& comm, std::size_t d, int bits, double beta,
              std::int64_t reset_period, std::size_t group_size, Form form)
    : comm_(comm),
      d_(d),
      form_(checked(form)),
      bits_(bits),
      beta_(float(beta)),
      reset_period_(reset_period),
      layout_(loco::ChunkLayout::of((d + comm.size() - 1) / comm.size(), group_size, bits)),
      sent_error_(error_buffer<ErrorBuffer>("loco_sent_error", layout_.length * comm.size(),
                                            layout_.groups * comm.size())),
      owned_error_(error_buffer<ErrorBuffer>("loco_owned_error", layout_.length, layout_.groups)),
      v_("loco_v", layout_.length * comm.size()),
      owned_v_("loco_owned_v", layout_.length),
      send_("loco_send", layout_.bytes * comm.size()),
      received_("loco_received", layout_.bytes * comm.size()),
      owned_("loco_owned", layout_.bytes),
      gathered_("loco_gathered", layout_.bytes * comm.size()),
      codes_(form_ == Form::host ? layout_.length * comm.size() : 0) {}

template <class T>
nlohmann::json Loco<T>::describe() const {
  return {{"method", "loco"},
          {"bits", bits_},
          {"beta", beta_},
          {"reset_period", reset_period_},
          {"group_size", layout_.group},
          {"chunk_bytes", layout_.bytes}};
}

template <class T>
void Loco<T>::state(StateArchive& a) {
  a.value("loco.step", step_);
  a.view("loco.sent_error.codes", sent_error_.codes);
  a.view("loco.sent_error.steps", sent_error_.steps);
  a.view("loco.owned_error.codes", owned_error_.codes);
  a.view("loco.owned_error.steps", owned_error_.steps);
}

template <class T>
void Loco<T>::reduce(const Vector<T>& local, const Vector<T>& sum) {
  if (step_ > 0 && step_ % reset_period_ == 0) {
    for (ErrorBuffer* e : {&sent_error_, &owned_error_}) {
      Kokkos::deep_copy(e->codes, std::int8_t(0));
      Kokkos::deep_copy(e->steps, 0.0f);
    }
  }
  if (kHostMemory && form_ == Form::host)
    reduce_on_host(local, sum);
  else
    reduce_on_device(local, sum);
  ++step_;
}

template <class T>
void Loco<T>::reduce_on_device(const Vector<T>& local, const Vector<T>& sum) {
  const loco::ChunkLayout L = layout_;
  const std::size_t d = d_;
  const int ranks = comm_.size();
  const auto v = v_;
  Kokkos::parallel_for(
      "minisgd::loco_load", Kokkos::RangePolicy<ExecSpace>(0, v.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i) { v(i) = std::size_t(i) < d ? float(local(i)) : 0.0f; });
  compensated_quantize(v_, ranks, L, beta_, sent_error_.codes, sent_error_.steps, send_.device);
  comm_.alltoall(send_.to_host(), received_.host.data(), L.bytes, comm::DType::u8);
  received_.to_device();

  // The owned chunk: the fp32 sum of what every rank sent for it, compensated and re-quantized.
  const auto received = received_.device;
  const auto owned_v = owned_v_;
  Kokkos::parallel_for(
      "minisgd::loco_sum_chunks", groups_of(1, L), KOKKOS_LAMBDA(const Team& team) {
        const Group G = group_of(team, L);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, G.n), [&](const std::size_t t) {
          const std::size_t j = G.first + t;
          float s = 0;
          for (int p = 0; p < ranks; ++p) s += L.value(&received(p * L.bytes), G.g, j);
          owned_v(j) = s;
        });
      });
  compensated_quantize(owned_v_, 1, L, beta_, owned_error_.codes, owned_error_.steps,
                       owned_.device);
  comm_.allgather(owned_.to_host(), gathered_.host.data(), L.bytes, comm::DType::u8);
  gathered_.to_device();
  const auto gathered = gathered_.device;
  Kokkos::parallel_for(
      "minisgd::loco_decode", groups_of(ranks, L), KOKKOS_LAMBDA(const Team& team) {
        const Group G = group_of(team, L);
        const std::uint8_t* chunk = &gathered(G.chunk * L.bytes);
        const std::size_t base = G.chunk * L.length + G.first;  // the first value's index
        const std::size_t n = base >= d ? 0 : kmin(G.n, d - base);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](const std::size_t t) {
          sum(base + t) = T(L.value(chunk, G.g, G.first + t));
        });
      });
}

template <class T>
void Loco<T>::reduce_on_host(const Vector<T>& local, const Vector<T>& sum) {
  const loco::ChunkLayout L = layout_;
  const std::size_t d = d_;
  const int ranks = comm_.size();
  float* const v = v_.data();
  const T* const g = local.data();
  host_for("minisgd::loco_load", v_.extent(0),
           [=](std::size_t i) { v[i] = i < d ? float(g[i]) : 0.0f; });
  const codec::CodecKernels<T>* const k = &codec::active_codec<T>();
  const int w = L.per_byte == 2 ? 1 : 0;  // the loops' index: codes per byte − 1
  const std::int64_t per_item = groups_per_item(L);
  const auto quantize = [&](float* x, std::size_t chunks, ErrorBuffer& e, std::uint8_t* payload) {
    const auto run = k->loco_quantize[w];
    const float beta = beta_;
    std::int8_t* const e_codes = e.codes.data();
    float* const e_steps = e.steps.data();
    std::int8_t* const q = codes_.data();
    codec::for_chunks(
        "minisgd::loco_quantize", std::int64_t(chunks * L.groups),
        [=](std::int64_t k0, std::int64_t k1) {
          run(x, L, beta, e_codes, e_steps, payload, q, k0, k1);
        },
        per_item);
  };
  quantize(v, std::size_t(ranks), sent_error_, send_.host.data());
  comm_.alltoall(send_.host.data(), received_.host.data(), L.bytes, comm::DType::u8);
  const auto sum_run = k->loco_sum[w];
  const std::uint8_t* const received = received_.host.data();
  float* const owned_v = owned_v_.data();
  codec::for_chunks(
      "minisgd::loco_sum_chunks", std::int64_t(L.groups),
      [=](std::int64_t k0, std::int64_t k1) { sum_run(L, received, ranks, owned_v, k0, k1); },
      per_item);
  quantize(owned_v, 1, owned_error_, owned_.host.data());
  comm_.allgather(owned_.host.data(), gathered_.host.data(), L.bytes, comm::DType::u8);
  const auto decode_run = k->loco_decode[w];
  const std::uint8_t* const gathered = gathered_.host.data();
  T* const out = sum.data();
  codec::for_chunks(
      "minisgd::loco_decode", std::int64_t(std::size_t(ranks) * L.groups),
      [=](std::int64_t k0, std::int64_t k1) { decode_run(L, gathered, d, out, k0, k1); }, per_item);
}

template class Loco<float>;
template class Loco<double>;

namespace {

/// What the layers above the deck know of compression.method: loco (record.hpp).
struct LocoMethod {
  template <class T>
  static std::unique_ptr<Compressor<T>> make(const CompressionConfig& c, const Setup& s) {
    return std::make_unique<Loco<T>>(s.comm, s.d, c.loco.bits, c.loco.beta, c.loco.reset_period,
                                     std::size_t(c.loco.group_size), s.form);
  }

  /// AllToAll, then AllGather, of one chunk per rank (loco::ChunkLayout's bytes).
  static std::vector<Collective> traffic(const CompressionConfig& c, const Exchange& e) {
    const auto up = [](double a, double b) { return std::ceil(a / b); };
    const double C = up(e.d, e.ranks), G = double(c.loco.group_size);
    const double chunk = 4 * up(4 * up(C, G) + up(C * c.loco.bits, 8), 4);
    return {Collective::alltoall(chunk), Collective::allgather(chunk)};
  }

  /// Per rank's chunk: int8 error codes, the fp32 v, and the send, receive and gather payloads of
  /// P chunks each; the owned chunk's again.
  static double bytes_held(const CompressionConfig& c, const Exchange& e) {
    const std::size_t d = std::size_t(e.d), ranks = std::size_t(e.ranks);
    const auto L =
        loco::ChunkLayout::of((d + ranks - 1) / ranks, std::size_t(c.loco.group_size), c.loco.bits);
    const double P = double(e.ranks);
    return (P + 1) * (5 * double(L.length) + 4 * double(L.groups)) + (3 * P + 1) * double(L.bytes);
  }

  static constexpr bool merges = false;
};

}  // namespace

const CompressorRecord loco_record = record_of<LocoMethod>();

}  // namespace minisgd::compress
