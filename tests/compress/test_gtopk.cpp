// gTop-k at the world size (run at 1, 2, 3 and 4 ranks): exact at P = 1, the same result on
// every rank, residual bookkeeping that conserves the sum, and the bytes of the formula.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include "minisgd/comm/merge_plan.hpp"
#include "minisgd/comm/mpi_communicator.hpp"
#include "minisgd/compress/gtopk.hpp"
#include "support/simulated_merge.hpp"
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
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::fabs(gh[a]) > std::fabs(gh[b]);
  });
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
      ASSERT_TRUE(std::equal(s.begin(), s.end(), all.begin() + p * d))
          << "rank " << p << " step " << step;
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
  const auto bytes = world.allreduce_value<std::uint64_t>(
      world.stats()[comm::Kind::sendrecv].bytes_sent, comm::Op::max);
  EXPECT_EQ(bytes, 8u * c.k() * std::uint64_t(comm::ceil_log2(world.size())));
}

namespace {

/// The test's own merge of two lists: the sums at shared indices (fp32), then the k entries of
/// largest magnitude (ties to the smaller index), by index.
std::vector<IndexValue> reference_merge(const std::vector<IndexValue>& a,
                                        const std::vector<IndexValue>& b, std::size_t k) {
  std::map<std::int32_t, float> sum;
  for (const auto& e : a) sum[e.index] = e.value;
  for (const auto& e : b) {
    const auto it = sum.find(e.index);
    if (it == sum.end())
      sum[e.index] = e.value;
    else
      it->second = it->second + e.value;
  }
  std::vector<IndexValue> all;
  for (const auto& [i, v] : sum) all.push_back({i, v});
  std::stable_sort(all.begin(), all.end(), [](const IndexValue& x, const IndexValue& y) {
    return std::fabs(x.value) > std::fabs(y.value);  // stable: ties keep index order
  });
  all.resize(std::min(all.size(), k));
  std::sort(all.begin(), all.end(),
            [](const IndexValue& x, const IndexValue& y) { return x.index < y.index; });
  return all;
}

}  // namespace

// The merge through the real schedule for simulated P up to 64 equals a greedy tree built here:
// rank p2+i folded into rank i, then log2 p2 rounds in which list i merges with list i xor 2^j.
// (A merge that kept the k smallest entries would still give equal, conserving results on every
// rank; this comparison would catch it.)
TEST(GTopK, MergeEqualsAnIndependentGreedyTree) {
  const std::size_t k = 12, d = 200;
  for (const int P : {1, 2, 3, 4, 5, 7, 8, 12, 16, 31, 32, 33, 64}) {
    std::mt19937_64 gen(P);
    std::uniform_int_distribution<int> level(-64, 64);
    std::vector<std::vector<IndexValue>> lists(P);
    for (auto& l : lists) {  // k distinct sorted indices with random values per rank
      std::vector<std::int32_t> idx(d);
      for (std::size_t i = 0; i < d; ++i) idx[i] = std::int32_t(i);
      std::shuffle(idx.begin(), idx.end(), gen);
      idx.resize(k);
      std::sort(idx.begin(), idx.end());
      for (const auto i : idx) l.push_back({i, level(gen) / 4.0f});
    }
    std::vector<std::vector<std::uint8_t>> data(P);
    for (int r = 0; r < P; ++r) {
      data[r].resize(k * sizeof(IndexValue));
      std::memcpy(data[r].data(), lists[r].data(), data[r].size());
    }
    test::simulate_merge_allreduce(comm::MergeShape::whole, data, sizeof(IndexValue),
                                   [](std::uint8_t* own, const std::uint8_t* received, std::size_t,
                                      std::size_t n, const comm::PlanStep&) {
                                     auto* a = reinterpret_cast<IndexValue*>(own);
                                     const auto out = compress::merge_top_k(
                                         a, reinterpret_cast<const IndexValue*>(received), n);
                                     std::copy(out.begin(), out.end(), a);
                                   });
    int p2 = 1;
    while (2 * p2 <= P) p2 *= 2;
    std::vector<std::vector<IndexValue>> tree(lists.begin(), lists.begin() + p2);
    for (int r = p2; r < P; ++r) tree[r - p2] = reference_merge(tree[r - p2], lists[r], k);
    for (int step = 1; step < p2; step *= 2) {
      std::vector<std::vector<IndexValue>> next(p2);
      for (int i = 0; i < p2; ++i) next[i] = reference_merge(tree[i], tree[i ^ step], k);
      tree = next;
    }
    for (int r = 0; r < P; ++r) {
      const auto* got = reinterpret_cast<const IndexValue*>(data[r].data());
      for (std::size_t j = 0; j < k; ++j) {
        ASSERT_EQ(got[j].index, tree[0][j].index) << "P " << P << " rank " << r << " entry " << j;
        ASSERT_EQ(got[j].value, tree[0][j].value) << "P " << P << " rank " << r << " entry " << j;
      }
    }
  }
}
