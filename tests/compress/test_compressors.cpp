// The compressors at the world size (run at 1, 2, 3 and 4 ranks): both forms of every method
// (host loops and the device's kernels, compress/form.hpp) the same bit for bit, exact bytes on
// the wire, APS without overflow and with exact unscaling through the real collective,
// Global-QSGD unbiased, LoCo's reset period, and the sparsifying compressors told a sparse
// gradient's touched columns computing what they compute without.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "minisgd/comm/merge_allreduce.hpp"
#include "minisgd/comm/merge_plan.hpp"
#include "minisgd/comm/mpi_communicator.hpp"
#include "minisgd/compress/aps_codec.hpp"
#include "minisgd/compress/compressor.hpp"
#include "minisgd/compress/exact_sparse.hpp"
#include "minisgd/compress/form.hpp"
#include "minisgd/compress/global_qsgd.hpp"
#include "minisgd/compress/gtopk.hpp"
#include "minisgd/compress/loco_codec.hpp"
#include "minisgd/compress/record.hpp"
#include "minisgd/compress/sparse.hpp"
#include "minisgd/compress/topk.hpp"
#include "minisgd/core/state_archive.hpp"
#include "minisgd/perfmodel/step_model.hpp"
#include "support/aps_reference.hpp"
#include "support/simd_tiers.hpp"
#include "support/simulated_merge.hpp"
#include "support/test_support.hpp"

using namespace minisgd;
using compress::Form;

namespace {

constexpr std::size_t kD = 2000;

struct World {
  comm::MpiCommunicator training{MPI_COMM_WORLD};
  comm::MpiCommunicator control{MPI_COMM_WORLD};  // reductions of the checks, never counted
  int P = training.size();
  int rank = training.rank();

  std::uint64_t max_bytes(comm::Kind k) {
    comm::Communicator& c = control;
    return c.allreduce_value<std::uint64_t>(training.stats()[k].bytes_sent, comm::Op::max);
  }
  std::uint64_t max_total() {
    comm::Communicator& c = control;
    return c.allreduce_value<std::uint64_t>(training.stats().total_bytes(), comm::Op::max);
  }
  double dense_bytes() const { return 2.0 * (P - 1) / P * 4.0 * kD; }
};

CompressionConfig method(const std::string& m) {
  return test::deck("compression: {method: " + m + "}").compression;
}

/// A gradient that differs on every rank.
template <class T>
Vector<T> gradient(std::size_t d, int rank, int step = 0) {
  Vector<T> g("g", d);
  Kokkos::parallel_for(
      "test_gradient", Kokkos::RangePolicy<ExecSpace>(0, d), KOKKOS_LAMBDA(const std::int64_t i) {
        g(i) = T(std::sin(0.37 * double(i) + 1.3 * rank + 0.11 * step) * (1.0 + double(i % 7)));
      });
  return g;
}

template <class T>
std::vector<T> host(const Vector<T>& v) {
  auto h = Kokkos::create_mirror_view_and_copy(HostSpace(), v);
  return std::vector<T>(h.data(), h.data() + h.extent(0));
}

/// One reduce of a d-vector with the method, counters from zero.
void reduce_once(World& w, const CompressionConfig& c) {
  auto comp = compress::make_compressor<float>(c, 1, kD, w.training);
  w.training.reset_stats();
  Vector<float> sum("sum", kD);
  comp->reduce(gradient<float>(kD, w.rank), sum);
}

/// Checks the elements the busiest rank sent in the merge collective for n elements: 2(P−1)/P·n
/// (exactly at P = 2^k with 4 | n; within a chunk's rounding off powers of two).
void expect_elementwise(const World& w, std::uint64_t sent, std::uint64_t n) {
  const std::uint64_t P = std::uint64_t(w.P);
  if ((P & (P - 1)) == 0) {
    EXPECT_EQ(sent, 2 * (P - 1) * n / P);
  } else {
    EXPECT_GE(sent, 2 * (P - 1) * (n / P));
    EXPECT_LE(sent, 2 * (P - 1) * ((n + P - 1) / P));
  }
}

std::uint64_t allreduce_model(const World& w, std::uint64_t bytes) {
  return std::uint64_t(2.0 * (w.P - 1) / w.P * double(bytes));
}

/// Rank p's gradient at `step` for the comparison of the forms: gradient() over magnitudes from
/// 2^-10 to 2^9, the largest value of each block of 7, 100 and 256 at the block's end (so that a
/// block maximum that misses a value changes its scale), a block of 256 zero on every rank
/// (APS's zero block), and zero at every 11th value (the sparse method's gaps).
template <class T>
Vector<T> mixed_gradient(std::size_t d, int rank, int step) {
  Vector<T> g = gradient<T>(d, rank, step);
  auto h = Kokkos::create_mirror_view_and_copy(HostSpace(), g);
  for (std::size_t i = 0; i < d; ++i) {
    const int e = int((i / 1000) % 20) - 10;  // |gradient()| < 8
    const double sign = h(i) < 0 ? -1 : 1;
    h(i) = T(std::ldexp(i % 256 == 255  ? 50 * sign
                        : i % 100 == 99 ? 20 * sign
                        : i % 7 == 6    ? 9 * sign
                                        : double(h(i)),
                        e));
    if ((i >= 512 && i < 768) || i % 11 == 0) h(i) = T(0);
  }
  Kokkos::deep_copy(g, h);
  return g;
}

/// Both forms of `c` over `steps` steps from the same gradients: the same sums, bytes on the
/// wire and saved state, bit for bit.
template <class T>
void expect_forms_agree(World& w, const std::string& deck, std::size_t d, int steps) {
  const CompressionConfig c = test::deck(deck).compression;
  auto on_host = compress::make_compressor<T>(c, 7, d, w.training, Form::host);
  auto on_device = compress::make_compressor<T>(c, 7, d, w.training, Form::device);
  Vector<T> host_sum("host_sum", d), device_sum("device_sum", d);
  const std::string what = deck + " T " + (sizeof(T) == 4 ? "float" : "double");
  for (int t = 0; t < steps; ++t) {
    const Vector<T> g = mixed_gradient<T>(d, w.rank, t);
    std::uint64_t bytes[2];
    for (const Form form : {Form::host, Form::device}) {
      compress::Compressor<T>& comp = form == Form::host ? *on_host : *on_device;
      comp.set_epoch(t);
      w.training.reset_stats();
      comp.reduce(g, form == Form::host ? host_sum : device_sum);
      bytes[form == Form::device] = w.training.stats().total_bytes();
    }
    const std::vector<T> a = host(host_sum), b = host(device_sum);
    ASSERT_EQ(std::memcmp(a.data(), b.data(), d * sizeof(T)), 0)
        << what << ", step " << t << ": the sums differ first at "
        << std::mismatch(
               a.begin(), a.end(), b.begin(),
               [](T x, T y) {
                 return std::memcmp(&x, &y, sizeof(T)) == 0;
               }).first -
               a.begin();
    EXPECT_EQ(bytes[0], bytes[1]) << what << ", step " << t << ": bytes sent";
  }
  StateArchive host_state, device_state;
  on_host->state(host_state);
  on_device->state(device_state);
  EXPECT_TRUE(host_state.bytes() == device_state.bytes()) << what << ": the saved states differ";
}

/// The host form's sums of `deck` over `steps` steps from mixed_gradient(), on the active tier.
template <class T>
std::vector<std::vector<T>> host_sums(World& w, const std::string& deck, std::size_t d, int steps) {
  auto comp =
      compress::make_compressor<T>(test::deck(deck).compression, 7, d, w.training, Form::host);
  Vector<T> sum("sum", d);
  std::vector<std::vector<T>> sums;
  for (int t = 0; t < steps; ++t) {
    comp->set_epoch(t);
    comp->reduce(mixed_gradient<T>(d, w.rank, t), sum);
    sums.push_back(host(sum));
  }
  return sums;
}

/// The host form of `deck` on tier t: the generic tier's sums, bit for bit.
template <class T>
void expect_tier_agrees(World& w, const std::string& deck, std::size_t d, simd::Tier t) {
  const std::string what = deck + " T " + (sizeof(T) == 4 ? "float" : "double");
  ASSERT_TRUE(simd::use_tier(simd::Tier::generic));
  const auto expect = host_sums<T>(w, deck, d, 3);
  ASSERT_TRUE(simd::use_tier(t));
  const auto got = host_sums<T>(w, deck, d, 3);
  for (std::size_t step = 0; step < expect.size(); ++step)
    EXPECT_EQ(std::memcmp(expect[step].data(), got[step].data(), d * sizeof(T)), 0)
        << what << " on " << simd::name(t) << ", step " << step;
}

class CompressorTiers : public testing_support::EachTier {};

}  // namespace

// The host form's per-value loops (compress/host/codec_kernels.hpp) on each vector tier this CPU
// runs against the generic tier's: the same sums bit for bit, over steps that move the random
// bits, on d past the loops' chunks and not a multiple of the dither block.
TEST_P(CompressorTiers, AgreeBitForBit) {
  World w;
  if (!kHostMemory) GTEST_SKIP() << "no host form in a device build";
  const std::size_t d = 2 * 4096 + 809;
  for (const char* deck :
       {"qsgd", "qsgd, qsgd: {bits: 12}", "qsgd, qsgd: {dithering: exponential}", "global-qsgd",
        "global-qsgd, global-qsgd: {bits: 16}",
        "global-qsgd, global-qsgd: {dithering: exponential}", "cast", "cast, cast: {format: bf16}",
        "aps", "aps, aps: {format: e3m0, block_size: 7}", "aps, aps: {format: fp16, kahan: true}",
        "aps, aps: {format: e4m3, kahan: true, block_size: 100}", "loco",
        "loco, loco: {bits: 8, beta: 0.5, group_size: 64, reset_period: 2}"}) {
    const std::string what = std::string("compression: {method: ") + deck + "}";
    expect_tier_agrees<float>(w, what, d, GetParam());
    expect_tier_agrees<double>(w, what, d, GetParam());
  }
}
MINISGD_FOR_EACH_TIER(CompressorTiers);

// Every method of the list (config/compression.hpp) with its default parameters, and the
// parameters that take other paths, in both forms on this host backend (compress/form.hpp): the
// device's kernels (team kernels of APS and LoCo, the top-k selection's histogram kernels, one
// element a thread of the ditherings, QSGD's decode and Global-QSGD's maximum) against the host
// loops, over steps that carry state (residuals, compensation errors, LoCo's reset, gTop-k's
// warm-up, the random bits' step), on d past the host paths' chunks and blocks: the same sums,
// bytes and state, bit for bit. A device build has only the device form.
TEST(CompressorForms, AgreeBitForBit) {
  World w;
  if (compress::runnable_forms().size() < 2) GTEST_SKIP() << "one form in a device build";
  std::vector<std::string> decks;
  for (const auto& [m, name] : names(CompressionMethod{}))
    decks.push_back(std::string("compression: {method: ") + name + "}");
  for (const char* other :
       {"cast, cast: {format: bf16}", "topk, topk: {density: 0.05}",
        "gtopk, gtopk: {density: 0.02, warmup_epochs: 2}", "qsgd, qsgd: {bits: 12}",
        "qsgd, qsgd: {dithering: exponential}", "global-qsgd, global-qsgd: {bits: 16}",
        "global-qsgd, global-qsgd: {dithering: exponential}",
        "aps, aps: {format: e3m0, block_size: 7}", "aps, aps: {format: fp16, kahan: true}",
        "aps, aps: {format: e4m3, kahan: true, block_size: 100}",
        "loco, loco: {bits: 8, beta: 0.5, group_size: 64, reset_period: 2}"})
    decks.push_back(std::string("compression: {method: ") + other + "}");
  for (const std::string& deck : decks) {
    // Past the top-k host path's chunk of 65 536 keys for the sparsifiers, past two of
    // Global-QSGD's host blocks of 4096 for all; not a multiple of 16, 256, 7 or 100.
    const std::size_t d = deck.find("topk") != std::string::npos ? 65536 + 4465 : 2 * 4096 + 809;
    expect_forms_agree<float>(w, deck, d, 3);
    expect_forms_agree<double>(w, deck, d, 3);
  }
}

// The point-to-point collective with an exact merge (integer sums) over MPI agrees with MPI's
// own AllReduce at every P, 3 included (fold-in), for both schedules and for lengths below P.
TEST(MergeAllreduce, IntegerSumsEqualMpiAllreduce) {
  World w;
  comm::Communicator& control = w.control;
  for (const comm::MergeShape shape : {comm::MergeShape::elementwise, comm::MergeShape::whole})
    for (const std::size_t n : {std::size_t(1), std::size_t(3), std::size_t(1001)}) {
      std::vector<std::int64_t> mine(n), expect(n);
      for (std::size_t i = 0; i < n; ++i) mine[i] = expect[i] = std::int64_t(i * 7 + 1000 * w.rank);
      control.allreduce(expect.data(), n);
      comm::merge_allreduce(w.training, shape, reinterpret_cast<std::uint8_t*>(mine.data()), n,
                            sizeof(std::int64_t),
                            [](std::uint8_t* own, const std::uint8_t* received, std::size_t,
                               std::size_t m, const comm::PlanStep&) {
                              auto* a = reinterpret_cast<std::int64_t*>(own);
                              const auto* b = reinterpret_cast<const std::int64_t*>(received);
                              for (std::size_t i = 0; i < m; ++i) a[i] += b[i];
                            });
      EXPECT_EQ(mine, expect) << "n " << n;
    }
}

// Every byte formula of docs/compression.md, per rank and step (maximum over ranks).
TEST(CompressorBytes, MatchTheFormulas) {
  World w;
  const std::uint64_t d = kD, P = std::uint64_t(w.P);
  const std::uint64_t k = compress::top_k_count(kD, 0.01);

  reduce_once(w, method("none"));
  EXPECT_EQ(w.max_total(), allreduce_model(w, 4 * d));

  reduce_once(w, method("cast"));  // 2-byte codes
  expect_elementwise(w, w.max_total() / 2, d);

  reduce_once(w, method("topk"));  // (P−1)·k pairs of 8 bytes
  EXPECT_EQ(w.max_total(), (P - 1) * k * 8);

  reduce_once(w, method("qsgd"));  // AllGather of d int8 codes and one fp64 norm
  EXPECT_EQ(w.max_total(), (P - 1) * (d + 8));

  reduce_once(w, method("global-qsgd"));  // int8 codes summed in the p2p collective + the max
  expect_elementwise(w, w.max_bytes(comm::Kind::sendrecv), d);
  EXPECT_EQ(w.max_bytes(comm::Kind::allreduce), allreduce_model(w, 8));

  CompressionConfig exp = method("global-qsgd");
  exp.global_qsgd.dithering = Dithering::exponential;
  reduce_once(w, exp);  // 1-byte codes through the p2p collective + the fp64 max
  expect_elementwise(w, w.max_bytes(comm::Kind::sendrecv), d);

  reduce_once(w, method("aps"));  // 8-bit codes + 16-bit exponents of ⌈d/256⌉ blocks
  const std::uint64_t blocks = (d + 255) / 256;
  expect_elementwise(w, w.max_bytes(comm::Kind::sendrecv), d);
  EXPECT_EQ(w.max_bytes(comm::Kind::allreduce), allreduce_model(w, 2 * blocks));

  CompressionConfig aps4 = method("aps");
  aps4.aps.format = "e3m0";
  reduce_once(w, aps4);  // two 4-bit codes per byte
  expect_elementwise(w, w.max_bytes(comm::Kind::sendrecv), d / 2);

  reduce_once(w, method("gtopk"));
  EXPECT_EQ(w.max_total(), 8 * k * std::uint64_t(comm::ceil_log2(w.P)));

  // LoCo: AllToAll + AllGather of one chunk per rank; a chunk of C = ⌈d/P⌉ values is one fp32
  // step per group of 128 and ⌈C·bits/8⌉ bytes of codes, padded to 4 bytes.
  for (const int bits : {4, 8}) {
    CompressionConfig loco = method("loco");
    loco.loco.bits = bits;
    reduce_once(w, loco);
    const std::uint64_t C = (d + P - 1) / P, raw = 4 * ((C + 127) / 128) + (C * bits + 7) / 8;
    EXPECT_EQ(w.max_total(), 2 * (P - 1) * ((raw + 3) / 4 * 4)) << bits << " bits";
  }
}

// Every method of the list (config/compression.hpp) with its default parameters: the bytes its
// record's traffic (compress/record.hpp, priced by perfmodel/step_model.cpp) says a step sends
// are what its compressor sends, the most of any rank (counters are whole bytes). Off powers of
// two a merge collective's bytes are its critical path's, which crosses ranks (a folded-in
// rank's message, then its partner's rounds): at least any one rank's, to within the rounding of
// its chunks (2(P−1) messages, an element each, 8 bytes at most). Exact sparse's traffic is its
// worst case, every value sent.
TEST(CompressorBytes, TheTrafficModelSendsWhatTheCompressorSends) {
  World w;
  perfmodel::Machine machine;
  machine.memory_Bps = 1e10;
  machine.latency_s = 1e-6;
  machine.network_Bps = 1e9;
  perfmodel::Workload load;
  load.ranks = w.P;
  load.batch = 256;
  load.features = std::int64_t(kD);
  const bool power_of_two = (w.P & (w.P - 1)) == 0;
  for (const auto& [m, name] : names(CompressionMethod{})) {
    load.compression = method(name);
    reduce_once(w, load.compression);
    const double sent = double(w.max_total());
    const double model = perfmodel::predict_step(load, machine).bytes;
    if (m == CompressionMethod::sparse)
      EXPECT_GE(model, sent) << name;
    else if (compress::merges_payloads(m) && !power_of_two)
      EXPECT_GE(model + 2.0 * (w.P - 1) * 8, sent) << name;
    else
      EXPECT_NEAR(model, sent, 1.0) << name;
  }
}

// Against dense fp32 (2(P−1)/P·4d) at any P (the merge collective sends 2(P−1)/P of its
// payload per rank off powers of two too): APS-8 and Global-QSGD-8 (both ditherings) ≤ 26%,
// LoCo-4 ≤ 14%.
TEST(CompressorBytes, RatiosToDense) {
  World w;
  if (w.P == 1) GTEST_SKIP() << "nothing is sent at P = 1";
  const auto ratio = [&](const std::string& m) {
    reduce_once(w, method(m));
    return double(w.max_total()) / w.dense_bytes();
  };
  EXPECT_LE(ratio("global-qsgd"), 0.26);
  EXPECT_LE(ratio("loco"), 0.14);
  EXPECT_LE(ratio("aps"), 0.26);
  CompressionConfig exponential = method("global-qsgd");
  exponential.global_qsgd.dithering = Dithering::exponential;
  reduce_once(w, exponential);
  EXPECT_LE(double(w.max_total()) / w.dense_bytes(), 0.26);
}

// Through the real collective: blocks from 2^-100 to 2^100 (the per-block scale keeps each in
// range), every rank holding the same ±2^k, so every partial sum is representable in E5M2 and
// the result must be exactly P·g; then the worst case for overflow, every rank at the maximum.
TEST(ApsCollective, UnscalesExactlyAndNeverOverflows) {
  World w;
  auto comp = compress::make_compressor<double>(method("aps"), 1, 4 * 256, w.training);
  Vector<double> g("g", 4 * 256), sum("sum", 4 * 256);
  auto h = Kokkos::create_mirror_view(g);
  const double block_scale[] = {0x1p-100, 0x1p-15, 1.0, 0x1p100};
  for (std::size_t i = 0; i < h.extent(0); ++i)
    h(i) = (i % 3 ? 1 : -1) * std::ldexp(1.0, int(i % 4) - 3) * block_scale[i / 256];
  const std::vector<double> expect = [&] {
    std::vector<double> e(h.extent(0));
    for (std::size_t i = 0; i < e.size(); ++i) e[i] = double(float(h(i))) * w.P;
    return e;
  }();
  for (std::size_t i = 0; i < h.extent(0); ++i) h(i) = double(float(h(i)));
  Kokkos::deep_copy(g, h);
  comp->reduce(g, sum);
  EXPECT_EQ(host(sum), expect);

  Kokkos::deep_copy(g, 6.5e4);
  comp->reduce(g, sum);
  for (const double s : host(sum)) ASSERT_TRUE(std::isfinite(s) && s > 0);
}

namespace {

/// Rank p's gradient for the APS comparison: gradient() with block 2 of `block` values zero on
/// every rank and, on rank 0, a NaN in block 1 (its block's exponent ignores it; its sum is NaN).
template <class T>
std::vector<T> aps_input(std::size_t d, std::size_t block, int p) {
  std::vector<T> g = host(gradient<T>(d, p));
  for (std::size_t i = 2 * block; i < std::min(3 * block, d); ++i) g[i] = T(0);
  if (p == 0) g[block + 1] = T(NAN);
  return g;
}

/// What APS sums from every rank's aps_input, value by value with the codec's functions
/// (support/aps_reference.hpp).
template <class T>
std::vector<T> aps_reference(std::size_t d, std::size_t block, int P, precision::CustomFormat f,
                             bool kahan) {
  std::vector<std::vector<T>> g;
  for (int p = 0; p < P; ++p) g.push_back(aps_input<T>(d, block, p));
  const std::vector<double> sum = test::aps_reference_sum(g, block, f, kahan);
  return std::vector<T>(sum.begin(), sum.end());
}

template <class T>
void expect_aps_as_the_codec(World& w, Form form) {
  const std::size_t d = 1001;
  for (const char* format : {"e5m2", "e4m3", "e3m0", "fp16", "bf16"})
    for (const bool kahan : {false, true})
      for (const std::size_t block : {std::size_t(7), std::size_t(256)}) {
        const std::string deck = std::string("compression: {method: aps, aps: {format: ") + format +
                                 ", kahan: " + (kahan ? "true" : "false") +
                                 ", block_size: " + std::to_string(block) + "}}";
        auto comp =
            compress::make_compressor<T>(test::deck(deck).compression, 1, d, w.training, form);
        Vector<T> g("g", d), sum("sum", d);
        const std::vector<T> mine = aps_input<T>(d, block, w.rank);
        Kokkos::deep_copy(g, Kokkos::View<const T*, HostSpace>(mine.data(), d));
        comp->reduce(g, sum);
        const std::vector<T> got = host(sum),
                             expect = aps_reference<T>(d, block, w.P,
                                                       compress::aps::wire_format(format), kahan);
        EXPECT_EQ(std::memcmp(got.data(), expect.data(), d * sizeof(T)), 0)
            << format << (kahan ? " kahan" : "") << " block " << block << " P " << w.P << ", "
            << compress::to_string(form) << " form";
      }
}

}  // namespace

// The compressor's both forms (vectorized loops over host memory, the device's team kernels,
// each run here) sum exactly what the codec's per-value functions do, bit for bit: every wire
// format (two codes to a byte, one, two bytes), with and without the compensation lane, blocks
// of 7 (an element of 4-bit codes across two blocks) and 256, a block zero on every rank, a
// NaN; float and double.
TEST(ApsCollective, SumsAsThePerValueCodec) {
  World w;
  for (const Form form : compress::runnable_forms()) {
    expect_aps_as_the_codec<float>(w, form);
    expect_aps_as_the_codec<double>(w, form);
  }
}

// aps.kahan through the deck, the factory and the real collective: every rank sends values in
// [0.5, 1), whose sums outgrow E5M2's 2 fraction bits, so every merge rounds. Against the exact
// sum of what the ranks sent (each value rounded once to the format in its block's scale,
// recomputed here from every rank's gradient), the compensated sum must be far more accurate
// than the plain one; on one rank nothing is merged and both are exact.
TEST(ApsCollective, KahanLaneMakesTheSumMoreAccurate) {
  World w;
  const std::size_t d = 4 * 256;
  const precision::CustomFormat f{5, 2};
  auto value = [](std::size_t i, int rank) {
    return double(float(0.75 + 0.25 * std::sin(0.61 * double(i) + 2.3 * rank)));
  };
  std::vector<double> sent(d, 0.0);
  for (std::size_t b = 0; b < d / 256; ++b) {
    float block_max = 0;
    for (int r = 0; r < w.P; ++r)
      for (std::size_t i = b * 256; i < (b + 1) * 256; ++i)
        block_max = std::fmax(block_max, float(value(i, r)));
    const int shift = compress::aps::block_shift(f, compress::aps::headroom_bits(f, w.P),
                                                 compress::aps::block_exponent(block_max, w.P));
    for (int r = 0; r < w.P; ++r)
      for (std::size_t i = b * 256; i < (b + 1) * 256; ++i)
        sent[i] += compress::aps::unscale(
            precision::decode(compress::aps::encode_scaled(float(value(i, r)), shift, f), f),
            shift);
  }
  Vector<double> g("g", d);
  auto h = Kokkos::create_mirror_view(g);
  for (std::size_t i = 0; i < d; ++i) h(i) = value(i, w.rank);
  Kokkos::deep_copy(g, h);
  double error[2] = {0, 0};
  for (const bool kahan : {false, true}) {
    const std::string deck = std::string("compression: {method: aps, aps: {format: e5m2, kahan: ") +
                             (kahan ? "true" : "false") + "}}";
    auto comp = compress::make_compressor<double>(test::deck(deck).compression, 1, d, w.training);
    Vector<double> sum("sum", d);
    comp->reduce(g, sum);
    const std::vector<double> s = host(sum);
    for (std::size_t i = 0; i < d; ++i) error[kahan] += (s[i] - sent[i]) * (s[i] - sent[i]);
  }
  if (w.P == 1) {
    EXPECT_EQ(error[0], 0.0);
    EXPECT_EQ(error[1], 0.0);
  } else {
    EXPECT_LT(error[1], 0.05 * error[0]) << "P " << w.P << ": rms " << std::sqrt(error[1] / d)
                                         << " with, " << std::sqrt(error[0] / d) << " without";
  }
}

// aps.scaling: false (the ablation of APS's scaling), in every form: each block's shift is 0, so
// E5M2 codes the values themselves. Values of 2^-20 lie below E5M2's smallest subnormal (2^-16)
// and every rank's code of them is 0; with scaling they are exact (a power of two in the block's
// scale). The report names the setting.
TEST(ApsCollective, WithoutScalingSmallValuesVanish) {
  World w;
  const std::size_t d = 3 * 256 + 5;
  const double tiny = std::ldexp(1.0, -20);
  Vector<double> g("g", d);
  Kokkos::deep_copy(g, tiny);
  for (const Form form : compress::runnable_forms())
    for (const bool scaling : {true, false}) {
      const std::string deck = std::string("compression: {method: aps, aps: {scaling: ") +
                               (scaling ? "true" : "false") + "}}";
      CompressionConfig c = test::deck(deck).compression;
      auto comp = compress::make_compressor<double>(c, 1, d, w.training, form);
      EXPECT_EQ(comp->describe()["scaling"], scaling);
      Vector<double> sum("sum", d);
      comp->reduce(g, sum);
      for (const double x : host(sum))
        ASSERT_EQ(x, scaling ? w.P * tiny : 0.0) << "scaling " << scaling << ", P " << w.P;
    }
}

// Global-QSGD's sum is unbiased: over N = 400 fixed-seed steps with the same input, the mean of
// each entry is within 6σ of Σ_p g_p, σ = (M/L)·√(P/4)/√N (each rank's rounding has variance
// ≤ ¼ level²).
TEST(GlobalQsgdCollective, IsUnbiased) {
  World w;
  const std::size_t d = 256;
  const int N = 400;
  auto comp = compress::make_compressor<double>(method("global-qsgd"), 3, d, w.training);
  const Vector<double> g = gradient<double>(d, w.rank), sum("sum", d);
  std::vector<double> mean(d, 0.0), exact = host(g);
  comm::Communicator& control = w.control;
  control.allreduce(exact.data(), d);
  double m = 0;
  for (const double x : host(g)) m = std::fmax(m, std::fabs(x));
  m = control.allreduce_value(m, comm::Op::max);
  for (int t = 0; t < N; ++t) {
    comp->reduce(g, sum);
    const std::vector<double> s = host(sum);
    for (std::size_t i = 0; i < d; ++i) mean[i] += s[i] / N;
  }
  const double level = m / compress::GlobalLevels::of(8, w.P).levels;
  const double sigma = level * std::sqrt(w.P / 4.0) / std::sqrt(double(N));
  for (std::size_t i = 0; i < d; ++i) EXPECT_NEAR(mean[i], exact[i], 6 * sigma) << i;
}

// The global scale is the largest |g| wherever it lies (the first or last value, either side of
// the host's blocks of 4096, on the last rank, negative, 0 there on the others): its code is
// exactly −L, so it comes back as itself; with a scale from the other values, a third of it,
// it would come back clamped to −0.5.
template <class T>
void expect_scaled_by_the_largest(World& w, Form form) {
  const std::size_t d = 2 * 4096 + 3;
  for (const std::size_t at : {std::size_t(0), std::size_t(4095), std::size_t(4096), d - 1}) {
    auto comp = compress::make_compressor<T>(method("global-qsgd"), 3, d, w.training, form);
    auto h = Kokkos::create_mirror_view(Vector<T>("g", d));
    for (std::size_t i = 0; i < d; ++i) h(i) = T(i % 3 == 0 ? 0.5 : 0.0);
    h(at) = T(w.rank == w.P - 1 ? -1.5 : 0.0);
    Vector<T> g("g", d), sum("sum", d);
    Kokkos::deep_copy(g, h);
    comp->reduce(g, sum);
    EXPECT_NEAR(double(host(sum)[at]), -1.5, 1e-6)
        << "largest at " << at << ", " << compress::to_string(form) << " form";
  }
}

TEST(GlobalQsgdCollective, ScalesByTheLargestMagnitudeAnywhere) {
  World w;
  for (const Form form : compress::runnable_forms()) {
    expect_scaled_by_the_largest<float>(w, form);
    expect_scaled_by_the_largest<double>(w, form);
  }
}

// LoCo forgets its compensation errors every reset_period steps: after T steps it behaves like
// a fresh compressor, bit for bit; before that, the errors change the result.
TEST(LocoCollective, ResetsAtThePeriod) {
  World w;
  CompressionConfig c = method("loco");
  c.loco.reset_period = 3;
  for (const Form form : compress::runnable_forms()) {
    auto used = compress::make_compressor<float>(c, 1, kD, w.training, form);
    Vector<float> out("out", kD), fresh_out("fresh_out", kD);
    for (int t = 0; t < 3; ++t) used->reduce(gradient<float>(kD, w.rank, t), out);
    auto fresh = compress::make_compressor<float>(c, 1, kD, w.training, form);
    fresh->reduce(gradient<float>(kD, w.rank, 2), fresh_out);
    EXPECT_NE(host(out), host(fresh_out)) << compress::to_string(form);  // step 3 used errors

    used->reduce(gradient<float>(kD, w.rank, 3), out);
    auto fresh2 = compress::make_compressor<float>(c, 1, kD, w.training, form);
    fresh2->reduce(gradient<float>(kD, w.rank, 3), fresh_out);
    EXPECT_EQ(host(out), host(fresh_out)) << compress::to_string(form);
  }
}

namespace {

/// Rank p's gradient for the exact sparse method: gradient() kept on every (p + 2)-th entry
/// and on the entries i ≡ 1 (mod 5) (shared by every rank), zero elsewhere; rank 1 sends none.
std::vector<double> sparse_input(std::size_t d, int p) {
  const std::vector<double> dense = host(gradient<double>(d, p));
  std::vector<double> g(d, 0.0);
  if (p == 1) return g;
  for (std::size_t i = 0; i < d; ++i)
    if (i % std::size_t(p + 2) == 0 || i % 5 == 1) g[i] = dense[i];
  return g;
}

}  // namespace

// compression.method: sparse sums every rank's nonzero entries in rank order, bit for bit, and
// sends the count plus m (int32 index, fp64 value) pairs, m the largest count over the ranks.
TEST(ExactSparse, SumsInRankOrderAndSendsTheNonzeros) {
  World w;
  auto comp = compress::make_compressor<double>(method("sparse"), 1, kD, w.training);
  const std::vector<double> mine = sparse_input(kD, w.rank);
  Vector<double> g("g", kD), sum("sum", kD);
  auto h = Kokkos::create_mirror_view(g);
  for (std::size_t i = 0; i < kD; ++i) h(i) = mine[i];
  Kokkos::deep_copy(g, h);
  std::vector<double> expect(kD, 0.0);
  std::uint64_t m = 0;
  for (int p = 0; p < w.P; ++p) {
    const std::vector<double> theirs = sparse_input(kD, p);
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < kD; ++i)
      if (theirs[i] != 0) expect[i] += theirs[i], ++n;
    m = std::max(m, n);
  }
  w.training.reset_stats();
  comp->reduce(g, sum);
  EXPECT_EQ(host(sum), expect);
  EXPECT_EQ(w.max_bytes(comm::Kind::allgather), std::uint64_t(w.P - 1) * (8 + 12 * m));
  EXPECT_EQ(w.max_bytes(comm::Kind::allreduce), 0u);
}

namespace {

std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// g ← a sparse gradient: `count` distinct columns (in no particular order) drawn for (rank,
/// step), a few of the first 64 in steps 0-2 (where the zeros selected are the first columns),
/// else of all d; the rest zero. Its values repeat a few magnitudes (ties), include exact zeros
/// and values no float holds (an fp64 residual keeps their rounding error). Returns the columns.
template <class T>
std::vector<std::int32_t> sparse_gradient(const Vector<T>& g, std::size_t d, int rank, int step,
                                          std::size_t count) {
  std::vector<std::int32_t> cols;
  std::vector<bool> seen(d, false);
  const std::size_t range = step < 3 && count <= 16 ? 64 : d;
  for (std::uint64_t j = 0; cols.size() < count; ++j) {
    const auto c =
        std::int32_t(mix(std::uint64_t(step) << 40 ^ std::uint64_t(rank) << 32 ^ j) % range);
    if (!seen[std::size_t(c)]) seen[std::size_t(c)] = true, cols.push_back(c);
  }
  auto h = Kokkos::create_mirror_view(g);
  for (std::size_t i = 0; i < d; ++i) h(i) = T(0);
  for (const std::int32_t c : cols) {
    const std::uint64_t r = mix(std::uint64_t(c) * 977 + std::uint64_t(step) * 31 + rank);
    const double sign = (r >> 7 & 1) ? -1.0 : 1.0;
    switch (r % 8) {
      case 0: h(c) = T(0); break;
      case 1:
      case 2:
      case 3:
      case 4: h(c) = T(sign * 0.5 * double(1 + r / 8 % 4)); break;
      case 5: h(c) = T(sign * 0.1 * double(1 + r / 8 % 7)); break;
      default: h(c) = T(sign * 3.0 * double(r >> 11) / 9007199254740992.0);
    }
  }
  Kokkos::deep_copy(g, h);
  return cols;
}

template <class T>
bool same_bits(const Vector<T>& a, const Vector<T>& b) {
  const std::vector<T> x = host(a), y = host(b);
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0;
}

bool same_pairs(const Kokkos::View<compress::IndexValue*, MemSpace>& a,
                const Kokkos::View<compress::IndexValue*, MemSpace>& b) {
  const auto x = Kokkos::create_mirror_view_and_copy(HostSpace(), a);
  const auto y = Kokkos::create_mirror_view_and_copy(HostSpace(), b);
  return x.extent(0) == y.extent(0) &&
         std::memcmp(x.data(), y.data(), x.extent(0) * sizeof(compress::IndexValue)) == 0;
}

/// Two compressors of type C reduce the same sparse gradients, one told each step's touched
/// columns and one not: the same selections, sums and residuals, bit for bit, every step. Few
/// columns at first (fewer nonzeros than k: zeros are selected), then more, a restore from the
/// state (the support is found again), a step that touched none, and at last more than the
/// support path takes (it hands over to the scan of all d). Returns the told compressor's
/// selections on the support.
template <class C, class T>
std::int64_t expect_touched_changes_nothing(World& w) {
  const std::size_t d = std::size_t(1) << 16;
  C scan(w.training, d, 0.001), told(w.training, d, 0.001);
  Vector<T> g("g", d), s1("s1", d), s2("s2", d);
  for (int step = 0; step < 60; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    const std::size_t count = step == 40 ? 0 : step < 3 ? 5 : step < 50 ? 40 : d / 8;
    const std::vector<std::int32_t> cols = sparse_gradient(g, d, w.rank, step, count);
    scan.reduce(g, s1);
    told.set_touched(cols.data(), std::int64_t(cols.size()));
    told.reduce(g, s2);
    EXPECT_TRUE(same_bits(s1, s2));
    EXPECT_TRUE(same_bits(scan.residual(), told.residual()));
    EXPECT_TRUE(same_pairs(scan.selection(), told.selection()));
    if (step == 30) {  // a checkpoint and restart of the told one
      StateArchive saved;
      told.state(saved);
      StateArchive restored(saved.bytes());
      told.state(restored);
    }
  }
  return told.support_selections();
}

}  // namespace

// Top-k and gTop-k told the touched columns select on the gradient's support (plus the
// residual's nonzeros) on host backends: the same entries, residuals and sums as the scan of
// all d, for fp32 and fp64, at every P.
TEST(TouchedColumns, TopKAndGTopKSelectTheSameOnTheSupport) {
  World w;
  const std::int64_t on_support[] = {
      expect_touched_changes_nothing<compress::TopK<float>, float>(w),
      expect_touched_changes_nothing<compress::TopK<double>, double>(w),
      expect_touched_changes_nothing<compress::GTopK<float>, float>(w),
      expect_touched_changes_nothing<compress::GTopK<double>, double>(w)};
  for (const std::int64_t n : on_support) {
    if (kHostMemory)
      EXPECT_EQ(n, 50);  // steps 0-49; from step 50 on, the support outgrows d/16
    else
      EXPECT_EQ(n, 0);
  }
}

// compression.method: sparse told the touched columns sends the nonzeros among them: the same
// sum, bit for bit, and the same bytes as the scan of all d.
TEST(TouchedColumns, ExactSparseSendsTheSameNonzeros) {
  World w;
  const std::size_t d = std::size_t(1) << 14;
  compress::ExactSparse<double> scan(w.training, d), told(w.training, d);
  Vector<double> g("g", d), s1("s1", d), s2("s2", d);
  for (int step = 0; step < 5; ++step) {
    const std::vector<std::int32_t> cols = sparse_gradient(g, d, w.rank, step, step == 2 ? 0 : 100);
    w.training.reset_stats();
    scan.reduce(g, s1);
    const std::uint64_t bytes = w.max_bytes(comm::Kind::allgather);
    w.training.reset_stats();
    told.set_touched(cols.data(), std::int64_t(cols.size()));
    told.reduce(g, s2);
    EXPECT_TRUE(same_bits(s1, s2));
    EXPECT_EQ(w.max_bytes(comm::Kind::allgather), bytes);
    EXPECT_EQ(told.last_pairs(), scan.last_pairs());
  }
}
