// LoCo through the compressor at the world size (run at 1, 2, 3 and 4 ranks), in both forms
// (compress/form.hpp: host loops, the device's team kernels), against a model of every rank
// written here from docs/compression.md: β > 0 moving average of the errors, the
// int8 stored errors with an fp32 step per group, the owner's second buffer, chunks whose last
// group is short (⌈d/P⌉ not a multiple of the group size) or odd (d = 999: a lone 4-bit code in
// the last byte at P = 1 and 3), several steps. Bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "minisgd/comm/mpi_communicator.hpp"
#include "minisgd/compress/compressor.hpp"
#include "minisgd/compress/form.hpp"
#include "support/test_support.hpp"

using namespace minisgd;

namespace {

constexpr std::size_t kGroup = 64;

float gradient(std::size_t i, int rank, int step) {
  return float(std::sin(0.37 * double(i) + 1.3 * rank + 0.7 * step) * (1.0 + double(i % 5)));
}

/// Stored error of one buffer: int8 codes and one step per group.
struct Error {
  std::vector<std::int8_t> code;
  std::vector<float> step;
  float at(std::size_t j) const { return float(code[j]) * step[j / kGroup]; }
};

/// Quantizes v (one chunk, compensation already added) with `bits`, updates e with β, returns
/// the dequantized values the chunk decodes to.
std::vector<float> compensated(std::vector<float> v, Error& e, int bits, float beta) {
  const int L = 1 << (bits - 1);
  std::vector<float> deq(v.size()), enew(v.size());
  for (std::size_t g0 = 0; g0 < v.size(); g0 += kGroup) {
    const std::size_t g1 = std::min(v.size(), g0 + kGroup);
    float m = 0;
    for (std::size_t j = g0; j < g1; ++j) m = std::max(m, std::fabs(v[j]));
    const float step = m / float(L);
    for (std::size_t j = g0; j < g1; ++j) {
      float q = step == 0 ? 0.0f : std::rint(v[j] / step);
      q = std::min(std::max(q, float(-L)), float(L - 1));
      deq[j] = q * step;
      enew[j] = beta * e.at(j) + (1.0f - beta) * (v[j] - deq[j]);
    }
  }
  for (std::size_t g0 = 0; g0 < v.size(); g0 += kGroup) {
    const std::size_t g1 = std::min(v.size(), g0 + kGroup);
    float m = 0;
    for (std::size_t j = g0; j < g1; ++j) m = std::max(m, std::fabs(enew[j]));
    const float step = m / 127.0f;
    e.step[g0 / kGroup] = step;
    for (std::size_t j = g0; j < g1; ++j)
      e.code[j] = step == 0 ? 0 : std::int8_t(std::rint(enew[j] / step));
  }
  return deq;
}

}  // namespace

TEST(LocoReference, MatchesAModelOfEveryRank) {
  comm::MpiCommunicator mpi(MPI_COMM_WORLD);
  const int P = mpi.size(), rank = mpi.rank();
  for (const compress::Form form : compress::runnable_forms())
    for (const std::size_t d : {std::size_t(1000), std::size_t(999)})
      for (const int bits : {4, 8}) {
        const std::size_t C = (d + P - 1) / P, groups = (C + kGroup - 1) / kGroup;
        const float beta = 0.75f;
        CompressionConfig c = test::deck("compression: {method: loco}").compression;
        c.loco.bits = bits;
        c.loco.beta = beta;
        c.loco.group_size = kGroup;
        c.loco.reset_period = 1000;
        auto comp = compress::make_compressor<float>(c, 1, d, mpi, form);
        const Error zero{std::vector<std::int8_t>(C), std::vector<float>(groups)};
        std::vector<std::vector<Error>> sent(P, std::vector<Error>(P, zero));  // [rank][chunk]
        std::vector<Error> owned(P, zero);
        for (int t = 0; t < 4; ++t) {
          std::vector<std::vector<float>> to_owner(P, std::vector<float>(C, 0.0f));  // fp32 sums
          for (int p = 0; p < P; ++p) {
            for (int o = 0; o < P; ++o) {
              std::vector<float> v(C);
              for (std::size_t j = 0; j < C; ++j) {
                const std::size_t i = o * C + j;
                v[j] = (i < d ? gradient(i, p, t) : 0.0f) + sent[p][o].at(j);
              }
              const std::vector<float> deq = compensated(v, sent[p][o], bits, beta);
              for (std::size_t j = 0; j < C; ++j) to_owner[o][j] += deq[j];
            }
          }
          std::vector<float> expect(d);
          for (int o = 0; o < P; ++o) {
            std::vector<float> v(C);
            for (std::size_t j = 0; j < C; ++j) v[j] = to_owner[o][j] + owned[o].at(j);
            const std::vector<float> deq = compensated(v, owned[o], bits, beta);
            for (std::size_t j = 0; j < C && o * C + j < d; ++j) expect[o * C + j] = deq[j];
          }
          Vector<float> g("g", d), sum("sum", d);
          auto gh = Kokkos::create_mirror_view(g);
          for (std::size_t i = 0; i < d; ++i) gh(i) = gradient(i, rank, t);
          Kokkos::deep_copy(g, gh);
          comp->reduce(g, sum);
          auto got = Kokkos::create_mirror_view_and_copy(HostSpace(), sum);
          for (std::size_t i = 0; i < d; ++i)
            ASSERT_EQ(got(i), expect[i]) << compress::to_string(form) << " form, d " << d
                                         << " bits " << bits << " step " << t << " element " << i;
        }
      }
}
