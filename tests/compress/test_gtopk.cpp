// gTop-k at the world size (run at 1, 2, 3 and 4 ranks): exact at P = 1, the same result on
// every rank, residual bookkeeping that conserves the sum, and the bytes of the formula.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "minisgd/comm/merge_plan.hpp"
#include "minisgd/comm/mpi_communicator.hpp"
#include "minisgd/compress/gtopk.hpp"
#include "support/test_support.hpp"

using namespace minisgd;
using compress::IndexValue;

namespace {

/// A reproducible gradient, different on every rank, with repeated magnitudes (ties).
Vector<double> gradient(std::size_t d, int rank, int step) {
  Vector<double> g("g", d);
  auto h = Kokkos::create_mirror_view(g);
  std::mt19937_64 gen(1000 * step + rank);
  std::uniform_int_distribution<int> level(-40, 40);
  for (std::size_t i = 0; i < d; ++i) h(i) = level(gen) / 8.0;
  Kokkos::deep_copy(g, h);
  return g;
}

std::vector<double> host(const Vector<double>& v) {
  auto h = Kokkos::create_mirror_view_and_copy(HostSpace(), v);
  return std::vector<double>(h.data(), h.data() + h.extent(0));
}

}  // namespace

TEST(GTopK, EqualsExactTopKOfOneRank) {
  comm::MpiCommunicator self(MPI_COMM_SELF);
  const std::size_t d = 500;
  compress::GTopK<double> c(self, d, 0.03);
  const Vector<double> g = gradient(d, 0, 0), sum("sum", d);
  c.reduce(g, sum);
  // Reference: sort by (|g| descending, index ascending), keep k.
  const std::vector<double> gh = host(g), s = host(sum);
  std::vector<std::size_t> order(d);
  for (std::size_t i = 0; i < d; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return std::fabs(gh[a]) > std::fabs(gh[b]); });
  std::vector<double> expect(d, 0.0);
  for (std::size_t j = 0; j < c.k(); ++j) expect[order[j]] = gh[order[j]];
  EXPECT_EQ(s, expect);
}

// Σ_p (g_p + r_p,old) = result + Σ_p r_p,new over several steps, to fp32 rounding of the sums.
TEST(GTopK, SameResultOnEveryRankAndResidualsConserveTheSum) {
  comm::MpiCommunicator mpi(MPI_COMM_WORLD);
  comm::Communicator& world = mpi;
  const std::size_t d = 400;
  const int P = world.size();
  compress::GTopK<double> c(world, d, 0.05);
  std::vector<double> fed(d, 0.0), applied(d, 0.0);  // Σ over steps and ranks
  for (int step = 0; step < 6; ++step) {
    const Vector<double> g = gradient(d, world.rank(), step), sum("sum", d);
    c.reduce(g, sum);
    const std::vector<double> gh = host(g), s = host(sum);
    std::vector<double> all(d * P);
    world.allgather(s.data(), all.data(), d);
    for (int p = 1; p < P; ++p)
      ASSERT_TRUE(std::equal(s.begin(), s.end(), all.begin() + p * d)) << "rank " << p << " step " << step;
    std::size_t nonzero = 0;
    for (std::size_t i = 0; i < d; ++i) {
      fed[i] += gh[i];
      applied[i] += s[i];
      nonzero += s[i] != 0;
    }
    EXPECT_LE(nonzero, c.k());
  }
  std::vector<double> residual = host(c.residual());
  world.allreduce(residual.data(), d);
  world.allreduce(fed.data(), d);
  for (std::size_t i = 0; i < d; ++i)
    EXPECT_NEAR(applied[i] + residual[i], fed[i], 1e-5 * (1 + std::fabs(fed[i]))) << i;
}

// k pairs of 8 bytes per round: at most k·⌈log2 P⌉ pairs per rank and step.
TEST(GTopK, SendsKPairsPerRound) {
  comm::MpiCommunicator mpi(MPI_COMM_WORLD);
  comm::Communicator& world = mpi;
  const std::size_t d = 1000;
  compress::GTopK<float> c(world, d, 0.01);
  Vector<float> g("g", d), sum("sum", d);
  Kokkos::deep_copy(g, 1.0f);
  c.reduce(g, sum);
  const auto bytes = world.allreduce_value<std::uint64_t>(world.stats()[comm::Kind::sendrecv].bytes_sent, comm::Op::max);
  EXPECT_EQ(bytes, 8u * c.k() * std::uint64_t(comm::ceil_log2(world.size())));
}
