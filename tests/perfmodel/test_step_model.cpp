// The algebra of the α-β-γ step model (docs/performance_model.md): what must hold whatever the
// machine's figures are. Expected values are written from the formulas of docs/ca_sgd.md and
// docs/compression.md, not taken from the model.
#include <gtest/gtest.h>

#include <cmath>

#include "minisgd/config/deck.hpp"
#include "minisgd/core/errors.hpp"
#include "minisgd/perfmodel/machine.hpp"
#include "minisgd/perfmodel/step_model.hpp"

using namespace minisgd;
using perfmodel::Machine;
using perfmodel::predict_step;
using perfmodel::Workload;

namespace {

Machine machine() {
  Machine m;
  m.memory_Bps = 20e9;
  m.stream_efficiency = 0.7;
  m.row_s = 10e-9;
  m.launch_s = 1e-6;
  m.gemm_fp64_Fps = 50e9;
  m.gemm_fp32_Fps = 100e9;
  m.gemm_bf16_Fps = 300e9;
  m.gram_entry_s = 1e-9;
  m.scalar_Fps = 2e9;
  m.latency_s = 20e-6;
  m.network_Bps = 10e9;
  return m;
}

Workload column(int P, std::int64_t b, std::int64_t d, int s) {
  Workload w;
  w.method = s > 0 ? Method::ca_sgd : Method::sgd;
  w.decomposition = Decomposition::column;
  w.ranks = P;
  w.batch = b;
  w.features = d;
  w.s = s > 0 ? s : 1;
  return w;
}

}  // namespace

TEST(StepModel, CaSgdAtOneStepIsSgdColumn) {
  for (const int P : {1, 2, 3, 8, 64}) {
    const auto sgd = predict_step(column(P, 256, 2000, 0), machine());
    const auto ca = predict_step(column(P, 256, 2000, 1), machine());
    EXPECT_DOUBLE_EQ(ca.compute_s, sgd.compute_s) << P;
    EXPECT_DOUBLE_EQ(ca.latency_s, sgd.latency_s) << P;
    EXPECT_DOUBLE_EQ(ca.bandwidth_s, sgd.bandwidth_s) << P;
  }
}

// One AllReduce per s steps: the latency per step is that of SGD divided by s.
TEST(StepModel, LatencyPerStepFallsBySteps) {
  for (const int P : {2, 3, 16})
    for (const int s : {2, 4, 16, 64}) {
      const double one = predict_step(column(P, 64, 500, 1), machine()).latency_s;
      EXPECT_NEAR(predict_step(column(P, 64, 500, s), machine()).latency_s, one / s, 1e-18)
          << "P " << P << " s " << s;
    }
}

// Words of an outer step: (b²s(s−1)/2 + s·b), each sent 2(P−1)/P times per rank.
TEST(StepModel, BandwidthGrowsWithTheGramOfSBRows) {
  const Machine m = machine();
  for (const int P : {2, 4, 5})
    for (const std::int64_t b : {16, 128})
      for (const int s : {1, 2, 8, 32}) {
        Workload w = column(P, b, 2000, s);
        w.wire_bytes = 4;
        const double words = double(b) * double(b) * s * (s - 1) / 2 + double(s) * double(b);
        const double outer_bytes = 2.0 * (P - 1) / P * 4 * words;
        const auto t = predict_step(w, m);
        EXPECT_DOUBLE_EQ(t.bytes * s, outer_bytes) << P << " " << b << " " << s;
        EXPECT_NEAR(t.bandwidth_s * s, outer_bytes / m.network_Bps, 1e-15);
      }
}

TEST(StepModel, OneRankSendsNothing) {
  for (const int s : {0, 1, 16}) {
    const auto t = predict_step(column(1, 64, 500, s), machine());
    EXPECT_EQ(t.latency_s, 0);
    EXPECT_EQ(t.bandwidth_s, 0);
    EXPECT_GT(t.compute_s, 0);
  }
}

// Emulation adds ⌈log2 P⌉·α_e and the counted bytes over β_e to every AllReduce.
TEST(StepModel, EmulatedNetworkAddsItsCostPerCollective) {
  Workload w = column(3, 64, 500, 0);
  const auto plain = predict_step(w, machine());
  w.emulated_latency_s = 1e-3;
  w.emulated_Bps = 1e9;
  const auto emulated = predict_step(w, machine());
  EXPECT_NEAR(emulated.latency_s - plain.latency_s, 2 * 1e-3, 1e-15);  // ⌈log2 3⌉ = 2
  EXPECT_NEAR(emulated.bandwidth_s - plain.bandwidth_s, 2.0 * 2 / 3 * 64 * 4 / 1e9, 1e-15);
}

// Each emulated wait lasts the machine's overshoot longer than asked: one per collective call,
// one per point-to-point message of a merge collective.
TEST(StepModel, EveryEmulatedWaitOvershoots) {
  Machine m = machine();
  Workload w = column(3, 64, 500, 0);
  w.emulated_latency_s = 1e-3;
  w.emulated_Bps = 1e9;
  const double base = predict_step(w, m).latency_s;
  m.wait_overshoot_s = 7e-6;
  EXPECT_NEAR(predict_step(w, m).latency_s - base, 7e-6, 1e-15);  // the margins' AllReduce
  Workload row = w;  // cast at P = 3: shifted trees, 2⌈log2 3⌉ = 4 messages
  row.decomposition = Decomposition::row;
  row.compression.method = CompressionMethod::cast;
  const double with = predict_step(row, m).latency_s;
  m.wait_overshoot_s = 0;
  const auto plain = predict_step(row, m);
  EXPECT_DOUBLE_EQ(plain.messages, 4);
  EXPECT_NEAR(with - plain.latency_s, 4 * 7e-6, 1e-15);
  // Without comm.emulate nothing waits.
  row.emulated_Bps = 0;
  m.wait_overshoot_s = 7e-6;
  const double native = predict_step(row, m).latency_s;
  m.wait_overshoot_s = 0;
  EXPECT_DOUBLE_EQ(predict_step(row, m).latency_s, native);
}

// A device waits for its kernels before every collective call (sync_us, one per call from
// two ranks on), never at one rank, where the reduction is the identity.
TEST(StepModel, ADeviceSyncsOncePerCollectiveCall) {
  Machine m = machine();
  const auto with_sync = [&](const Workload& w) {
    m.sync_s = 1e-300;  // a device all the same (below)
    const double free = predict_step(w, m).compute_s;
    m.sync_s = 5e-6;
    return predict_step(w, m).compute_s - free;
  };
  EXPECT_EQ(with_sync(column(1, 64, 500, 0)), 0);
  EXPECT_EQ(with_sync(column(1, 64, 500, 16)), 0);
  EXPECT_NEAR(with_sync(column(4, 64, 500, 0)), 5e-6, 1e-15);        // the margins' AllReduce
  EXPECT_NEAR(with_sync(column(4, 64, 500, 16)), 5e-6 / 16, 1e-15);  // one per outer step
  Workload row = column(3, 64, 500, 0);
  row.decomposition = Decomposition::row;
  EXPECT_NEAR(with_sync(row), 5e-6, 1e-15);         // the gradient's AllReduce
  row.compression.method = CompressionMethod::aps;  // the exponents' AllReduce, then the merge
  EXPECT_NEAR(with_sync(row), 2 * 5e-6, 1e-15);
  row.compression.method = CompressionMethod::loco;  // AllToAll, then AllGather
  EXPECT_NEAR(with_sync(row), 2 * 5e-6, 1e-15);
}

// A device runs its kernels while the host enqueues the next ones: at one rank (no collective
// to wait for) a step takes the longer of the host's part (launches, library calls,
// bookkeeping) and the kernels' part, where a host's synchronous kernels add the two. From two
// ranks on, each collective's wait splits the step into stretches that overlap apart.
TEST(StepModel, ADeviceOverlapsTheHostWithItsKernels) {
  for (const int s : {0, 1, 16}) {
    Machine m = machine();
    m.gram_call_s = 3e-6;
    m.launch_s = 4e-6;
    m.sgd_step_host_s = m.ca_outer_host_s = 20e-6;
    m.ca_inner_host_s = 1e-6;
    Machine kernels_only = m;  // the same machine without the host's part
    kernels_only.gram_call_s = kernels_only.launch_s = kernels_only.sgd_step_host_s = 0;
    kernels_only.ca_outer_host_s = kernels_only.ca_inner_host_s = 0;
    Machine host_only = m;  // and without the kernels' part
    host_only.memory_Bps = host_only.gemm_fp64_Fps = host_only.gemm_fp32_Fps = 1e300;
    host_only.gemm_bf16_Fps = host_only.scalar_Fps = 1e300;
    host_only.row_s = host_only.ca_row_s = host_only.decode_s = host_only.gram_entry_s = 0;
    for (const double d : {50.0, 5e5}) {  // host-bound, then kernel-bound
      const Workload one = column(1, 32, std::int64_t(d), s);
      const double H = predict_step(one, host_only).compute_s;
      const double K = predict_step(one, kernels_only).compute_s;
      ASSERT_GT(H, 0);
      ASSERT_GT(K, 0);
      EXPECT_NEAR(predict_step(one, m).compute_s, H + K, 1e-15 * (H + K)) << s << " " << d;
      for (Machine* x : {&m, &host_only, &kernels_only}) x->sync_s = 2e-6;
      EXPECT_NEAR(predict_step(one, m).compute_s, std::max(H, K), 1e-15 * (H + K)) << s << " " << d;
      // Two ranks: at least the longer part, at most both parts and the waits.
      const Workload two = column(2, 32, std::int64_t(d), s);
      const double t2 = predict_step(two, m).compute_s, h2 = predict_step(two, host_only).compute_s,
                   k2 = predict_step(two, kernels_only).compute_s;
      EXPECT_GE(t2, std::max(h2, k2) - 1e-18) << s << " " << d;
      EXPECT_LE(t2, h2 + k2 + 1e-18) << s << " " << d;
      for (Machine* x : {&m, &host_only, &kernels_only}) x->sync_s = 0;
    }
  }
}

// SGD (column) from two ranks on a device: the margins' stretch (one launch against the
// margins' kernel), the AllReduce's wait, then the gradient and update (two launches against
// the update of n weights) settle apart. With the host's launches half the margins' kernel:
// the kernel, then the two launches; one stretch for the whole step would give less.
TEST(StepModel, ACollectivesWaitSplitsTheOverlap) {
  Machine m = machine();
  m.cache_bytes = 1e12;  // the gradient's pass over the batch from the cache
  m.sgd_step_host_s = 0;
  m.sync_s = 2e-6;
  const Workload w = column(2, 4096, 1000, 0);
  Machine kernels_only = m;
  kernels_only.launch_s = 0;
  const double n = 500, update = 3 * n * 4 / (m.memory_Bps * m.stream_efficiency);
  const double margins = predict_step(w, kernels_only).compute_s - m.sync_s - update;
  m.launch_s = margins / 2;
  EXPECT_NEAR(predict_step(w, m).compute_s, margins + m.sync_s + 2 * m.launch_s, 1e-12 * margins);
}

// The passes over a batch after the first (the gradient product after the margins, and with
// s > 1 the gather for the Gram) read the rows from the cache when they fit in it, and from
// memory when they do not.
TEST(StepModel, ABatchThatFitsInTheCacheIsReadOnce) {
  Machine m = machine();
  const double b = 32, d = 1000, S = 4, rate = m.memory_Bps * m.stream_efficiency;
  for (const int s : {0, 1, 4}) {
    Workload w = column(1, std::int64_t(b), std::int64_t(d), s);
    const double rows = b * std::max(s, 1), rereads = s > 1 ? 2 : 1;
    m.cache_bytes = b * b * s * (s - 1) / 2 * 4;  // the packed Gram fits (below), the batch not
    const double memory = predict_step(w, m).compute_s;
    m.cache_bytes = rows * d * S;  // exactly fits
    EXPECT_NEAR(memory - predict_step(w, m).compute_s,
                rereads * rows * d * S / rate / std::max(s, 1), 1e-15)
        << s;
    m.cache_bytes = rows * d * S - 1;  // one byte short: read from memory again
    EXPECT_DOUBLE_EQ(predict_step(w, m).compute_s, memory) << s;
    m.cache_bytes = 0;
  }
}

// A second pass over rows that fit in the cache costs their bytes at the measured rate of such a
// pass (memory.reread_GBps): once in SGD's column step (the gradient product after the margins)
// and at CA-SGD s = 1, twice an outer step beyond (the gather for the Gram, the gradient
// products); nothing where no rate was measured; and a batch beyond the cache is read from
// memory again whatever that rate.
TEST(StepModel, ASecondPassFromTheCacheCostsItsRate) {
  const double b = 32, d = 1000, S = 4, reread = 100e9;
  for (const int P : {1, 3})
    for (const int s : {0, 1, 4}) {
      Workload w = column(P, std::int64_t(b), std::int64_t(d), s);
      const double rows = b * std::max(s, 1), n = std::ceil(d / P), rereads = s > 1 ? 2 : 1;
      Machine m = machine();
      m.cache_bytes = std::max(rows * n * S, b * b * s * (s - 1) / 2 * 4);  // all of it fits
      const double free = predict_step(w, m).compute_s;
      m.reread_Bps = reread;
      EXPECT_NEAR(predict_step(w, m).compute_s - free,
                  rereads * rows * n * S / reread / std::max(s, 1), 1e-15)
          << "P " << P << " s " << s;
      m.cache_bytes = rows * n * S - 1;  // one byte short: from memory, the rate does not apply
      const double from_memory = predict_step(w, m).compute_s;
      m.reread_Bps = 0;
      EXPECT_DOUBLE_EQ(predict_step(w, m).compute_s, from_memory) << "P " << P << " s " << s;
    }
}

// The host's share: once per SGD step, once per CA-SGD outer step plus once per inner step;
// so at s = 1 CA-SGD is SGD column plus the difference of the two loops' host costs.
TEST(StepModel, HostCostsPerStepAndPerOuterStep) {
  Machine m = machine();
  const auto kernels = [&](int s) { return predict_step(column(2, 64, 500, s), m).compute_s; };
  const double sgd = kernels(0), ca1 = kernels(1), ca16 = kernels(16);
  m.sgd_step_host_s = 3e-6;
  m.ca_outer_host_s = 5e-6;
  m.ca_inner_host_s = 0.25e-6;
  EXPECT_NEAR(kernels(0) - sgd, 3e-6, 1e-15);
  EXPECT_NEAR(kernels(1) - ca1, 5e-6 + 0.25e-6, 1e-15);
  EXPECT_NEAR(kernels(16) - ca16, 5e-6 / 16 + 0.25e-6, 1e-15);
  Workload row = column(2, 64, 500, 0);
  row.decomposition = Decomposition::row;
  const double with = predict_step(row, m).compute_s;
  m.sgd_step_host_s = 0;
  EXPECT_NEAR(with - predict_step(row, m).compute_s, 3e-6, 1e-15);
}

// The Gram's library makes one GEMM call per block row: s − 1 an outer step, (s − 1)/s a step,
// none at s = 1 (no block below the diagonal) and none for SGD, at any P.
TEST(StepModel, TheGramPaysOneCallPerBlockRow) {
  for (const int P : {1, 3})
    for (const int s : {0, 1, 2, 4, 64}) {
      Machine m = machine();
      const Workload w = column(P, 32, 600, s);
      const double without = predict_step(w, m).compute_s;
      m.gram_call_s = 2e-6;
      const double per_step = s > 1 ? (s - 1) * 2e-6 / s : 0;
      EXPECT_NEAR(predict_step(w, m).compute_s - without, per_step, 1e-15) << P << " " << s;
    }
}

// A library that forms the whole Y·Yᵀ in one call up to gram_whole_rows rows (cuBLAS, 1024)
// makes one call an outer step there, 1/s a step; beyond, and at s = 2, one per block row.
TEST(StepModel, TheWholeGramIsOneCallUpToItsRows) {
  for (const int s : {2, 4, 16, 32, 64}) {
    Machine m = machine();
    m.gram_whole_rows = 1024;
    const Workload w = column(1, 32, 600, s);  // s·b = 64 ... 2048 rows
    const double without = predict_step(w, m).compute_s;
    m.gram_call_s = 2e-6;
    const double calls = s * 32 <= 1024 && s > 2 ? 1 : s - 1;
    EXPECT_NEAR(predict_step(w, m).compute_s - without, calls * 2e-6 / s, 1e-15) << s;
    EXPECT_EQ(perfmodel::gram_calls(s, 32, m), calls) << s;
  }
  Machine host = machine();  // 0: one call per block row at every s
  EXPECT_EQ(perfmodel::gram_calls(16, 32, host), 15);
}

// Stored values narrower than the arithmetic (bf16 X, fp32 work) are widened on every pass
// that reads them: SGD row reads its ⌈b/P⌉ rows once; SGD column reads b·n twice (margins,
// gradient); CA-SGD reads s·b·n twice, three times when the Gram's input is wider than X.
TEST(StepModel, NarrowStorageIsWidenedOnEveryPass) {
  const double P = 3, b = 64, d = 600, n = 200, decode = 0.5e-9;
  const auto extra = [&](Workload w) {
    Machine m = machine();
    const double without = predict_step(w, m).compute_s;
    m.decode_s = decode;
    return predict_step(w, m).compute_s - without;
  };
  const auto narrow = [](Workload w, double gram_input) {
    w.storage_bytes = 2;
    w.arithmetic_bytes = 4;
    w.gram_input_bytes = gram_input;
    return w;
  };
  Workload row = column(int(P), std::int64_t(b), std::int64_t(d), 0);
  row.decomposition = Decomposition::row;
  EXPECT_EQ(extra(row), 0);  // fp32 storage: nothing to widen
  EXPECT_NEAR(extra(narrow(row, 2)), std::ceil(b / P) * d * decode, 1e-15);
  EXPECT_NEAR(extra(narrow(column(int(P), 64, 600, 0), 2)), 2 * b * n * decode, 1e-15);
  for (const int s : {1, 4, 16}) {
    const Workload ca = column(int(P), 64, 600, s);
    EXPECT_EQ(extra(ca), 0);
    EXPECT_NEAR(extra(narrow(ca, 2)), 2 * b * n * decode, 1e-15) << s;  // per step
    EXPECT_NEAR(extra(narrow(ca, 4)), (s > 1 ? 3 : 2) * b * n * decode, 1e-15) << s;
  }
}

// CA-SGD passes over each row three times (margins, recurrence, update) where SGD's fused
// kernels pass once: ca_row_s more per row of every inner step, so b·ca_row_s per step at any
// s and P, and nothing for SGD.
TEST(StepModel, CaSgdRowsCostTheirExtraPasses) {
  for (const int P : {1, 3})
    for (const int s : {0, 1, 4, 64}) {
      Machine m = machine();
      const Workload w = column(P, 48, 600, s);
      const double without = predict_step(w, m).compute_s;
      m.ca_row_s = 5e-9;
      EXPECT_NEAR(predict_step(w, m).compute_s - without, s > 0 ? 48 * 5e-9 : 0, 1e-15) << s;
    }
}

// More ranks than the node's cores take turns on them: local work ⌈P/cores⌉ times longer, and
// each message waits a context switch with the probability 1 − cores/P that its receiver is
// switched out. Up to the core count, or with no core count (a cluster), nothing changes.
TEST(StepModel, RanksBeyondTheCoresShareThem) {
  for (const int s : {0, 1, 16}) {
    Machine m = machine();
    Workload w = column(4, 64, 600, s);
    const auto alone = predict_step(w, m);
    m.switch_s = 3e-6;
    m.cores = 4;
    EXPECT_DOUBLE_EQ(predict_step(w, m).total_s(), alone.total_s());
    m.cores = 0;
    EXPECT_DOUBLE_EQ(predict_step(w, m).total_s(), alone.total_s());
    m.cores = 3;
    const auto shared = predict_step(w, m);
    // 4 ranks on 3 cores: one core holds two, and every step waits for its ranks
    EXPECT_NEAR(shared.compute_s, alone.compute_s * 2, 1e-15) << s;
    EXPECT_NEAR(shared.latency_s - alone.latency_s, alone.messages * (1 - 3.0 / 4) * 3e-6, 1e-15)
        << s;
    EXPECT_DOUBLE_EQ(shared.bandwidth_s, alone.bandwidth_s);
    m.cores = 2;  // two ranks per core: twice the work, every other message waits
    const auto twice = predict_step(w, m);
    EXPECT_NEAR(twice.compute_s, 2 * alone.compute_s, 1e-15) << s;
    EXPECT_NEAR(twice.latency_s - alone.latency_s, alone.messages * 0.5 * 3e-6, 1e-15) << s;
    // A network calibrated with the 4 ranks on the node has the waits in its α already.
    m.network_ranks = 4;
    const auto measured_so = predict_step(w, m);
    EXPECT_DOUBLE_EQ(measured_so.latency_s, alone.latency_s) << s;
    EXPECT_NEAR(measured_so.compute_s, 2 * alone.compute_s, 1e-15) << s;
    m.network_ranks = 2;
    EXPECT_DOUBLE_EQ(predict_step(w, m).latency_s, twice.latency_s) << s;
  }
}

// The row decomposition's AllReduce of d gradient values, dense and compressed.
TEST(StepModel, CompressorsSendTheirFractionOfDense) {
  Workload w;
  w.ranks = 3;
  w.batch = 256;
  w.features = 2000;
  const auto dense = predict_step(w, machine());
  EXPECT_DOUBLE_EQ(dense.bytes, 2.0 * 2 / 3 * 4 * 2000);
  w.compression.method =
      CompressionMethod::aps;  // 8-bit codes + int16 exponents of 256-value blocks
  EXPECT_DOUBLE_EQ(predict_step(w, machine()).bytes, 2.0 * 2 / 3 * (2000 + 2 * 8));
  w.compression.method = CompressionMethod::cast;
  EXPECT_DOUBLE_EQ(predict_step(w, machine()).bytes, 2.0 * 2 / 3 * 2 * 2000);
  w.compression.method = CompressionMethod::qsgd;  // two AllGathers: the scales, 8-bit codes
  const auto qsgd = predict_step(w, machine());
  EXPECT_DOUBLE_EQ(qsgd.bytes, 2.0 * (8 + 2000));
  EXPECT_DOUBLE_EQ(qsgd.messages, 2 * 2);          // ⌈log2 3⌉ each
  w.compression.method = CompressionMethod::topk;  // (P−1)·8k, k = 20
  EXPECT_DOUBLE_EQ(predict_step(w, machine()).bytes, 2.0 * 8 * 20);
}

// Sparse rows (docs/performance_model.md, "Sparse rows"): SGD's gradient costs its nonzeros at
// the per-nonzero rate, not d columns a row; the update is still over d.
TEST(StepModel, SparseRowsCostTheirNonzeros) {
  const Machine m = machine();  // memory: 20 GB/s at 0.7
  Workload w;
  w.ranks = 4;
  w.batch = 256;
  w.features = std::int64_t(1) << 22;
  const double d = double(w.features), rows = 64;
  const auto dense = predict_step(w, m);
  w.nnz_per_row = 39;
  w.touched = 1500;
  const auto sparse = predict_step(w, m);
  const double expected = rows * 39 * m.sparse_nnz_s + rows * m.row_s + 3 * m.launch_s +
                          3 * d * 4 / (20e9 * 0.7);  // the update: w read and written, g read
  EXPECT_NEAR(sparse.compute_s, expected, 1e-12 * expected);
  EXPECT_LT(sparse.compute_s, dense.compute_s / 10);
  EXPECT_DOUBLE_EQ(sparse.bytes, dense.bytes);  // the dense AllReduce of d values either way
}

// The exact sparse AllReduce on sparse rows: three AllGathers (counts, indices, values) of the m
// columns a rank's batch touches, 3⌈log2 P⌉ messages and (P−1)·(8 + 8m) bytes; at worst
// (dense rows) of all d.
TEST(StepModel, ExactSparseSendsTheTouchedColumns) {
  const Machine m = machine();
  for (const int P : {2, 4, 5, 16}) {
    Workload w;
    w.ranks = P;
    w.batch = 256;
    w.features = std::int64_t(1) << 22;
    w.compression.method = CompressionMethod::sparse;
    const double d = double(w.features), logp = std::ceil(std::log2(P));
    EXPECT_DOUBLE_EQ(predict_step(w, m).bytes, (P - 1) * (8 + 8 * d)) << P;
    w.nnz_per_row = 39;
    w.touched = 1500;
    const auto t = predict_step(w, m);
    EXPECT_DOUBLE_EQ(t.bytes, (P - 1) * (8 + 8 * 1500.0)) << P;
    EXPECT_DOUBLE_EQ(t.messages, 3 * logp) << P;
    EXPECT_DOUBLE_EQ(t.latency_s, 3 * logp * m.latency_s) << P;
    // Without a count of touched columns: the batch's nonzeros.
    w.touched = 0;
    EXPECT_DOUBLE_EQ(predict_step(w, m).bytes, (P - 1) * (8 + 8 * std::ceil(256.0 / P) * 39)) << P;
  }
}

// Top-k on sparse rows selects among the touched columns and its k pairs, not d values; it still
// sends k pairs of d.
TEST(StepModel, TopKOnSparseRowsSelectsOnTheSupport) {
  Machine m = machine();
  m.compress_value_s[std::size_t(CompressionMethod::topk)] = 3e-9;
  Workload w;
  w.ranks = 4;
  w.batch = 256;
  w.features = std::int64_t(1) << 22;
  w.compression.method = CompressionMethod::topk;  // density 0.01: k = 41 944
  const auto dense = predict_step(w, m);
  w.nnz_per_row = 39;
  w.touched = 1500;
  const auto sparse = predict_step(w, m);
  const double k = std::ceil(0.01 * double(w.features));
  EXPECT_DOUBLE_EQ(sparse.bytes, dense.bytes);
  EXPECT_DOUBLE_EQ(sparse.bytes, 3 * 8 * k);
  w.compression.method = CompressionMethod::none;
  const double plain = predict_step(w, m).compute_s;
  const double zero_sum = double(w.features) * 4 / (20e9 * 0.7);
  EXPECT_NEAR(sparse.compute_s - plain,
              (1500 + k) * 3e-9 + zero_sum + 4 * k * m.sparse_nnz_s + 2 * m.launch_s, 1e-12);
}

// The expected distinct columns of Zipf draws: with exponent 0 every column is as likely, and
// n draws of d columns touch d·(1 − (1 − 1/d)^n); a steeper law touches fewer.
TEST(StepModel, TouchedColumnsOfUniformAndZipfDraws) {
  for (const double d : {1000.0, 4194304.0})
    for (const double n : {10.0, 500.0, 2496.0})
      EXPECT_NEAR(perfmodel::expected_touched(d, n, 0), d * -std::expm1(n * std::log1p(-1 / d)),
                  1e-6 * n)
          << d << " " << n;
  const double zipf = perfmodel::expected_touched(4194304, 64 * 39, 1.1);
  EXPECT_LT(zipf, 64 * 39);
  EXPECT_GT(zipf, 0.3 * 64 * 39);
}

// A deck of sparse synthetic rows (stored sparse) gives the workload its nonzeros and touched
// columns; dense rows, none.
TEST(StepModel, ASparseDeckGivesItsShape) {
  const std::string deck = std::string(MINISGD_PAPER_DECKS) + "/synth-sgd-fp32.yaml";
  const std::vector<std::string> sets = {"data.synthetic.kind=sparse",
                                         "data.synthetic.nnz_per_row=39", "data.synthetic.zipf=1.1",
                                         "solver.batch_size=256", "solver.decomposition=row"};
  const std::int64_t d = std::int64_t(1) << 22;
  const Workload w = perfmodel::workload_of(load_deck(deck, sets), d, 4);
  EXPECT_DOUBLE_EQ(w.nnz_per_row, 39);
  EXPECT_DOUBLE_EQ(w.touched, perfmodel::expected_touched(double(d), 64 * 39, 1.1));
  EXPECT_EQ(perfmodel::workload_of(load_deck(deck), d, 4).nnz_per_row, 0);
}

// A compressor's encode and decode cost what the calibration measured per value where the
// machine file has it, else four passes over the gradient at the streaming rate.
TEST(StepModel, ACompressorCostsWhatItWasMeasuredToCost) {
  Workload w;
  w.ranks = 2;
  w.batch = 256;
  w.features = 2000;
  w.compression.method = CompressionMethod::loco;
  Machine m = machine();
  const double streamed = predict_step(w, m).compute_s;
  m.compress_value_s[std::size_t(CompressionMethod::loco)] = 12e-9;
  const double measured = predict_step(w, m).compute_s;
  const double four_passes = 4.0 * w.arithmetic_bytes * 2000 / (20e9 * 0.7);
  EXPECT_NEAR(measured - streamed, 2000 * 12e-9 - four_passes, 1e-15);
  m.compress_value_s[std::size_t(CompressionMethod::aps)] = 1e-6;  // another method's figure
  EXPECT_DOUBLE_EQ(predict_step(w, m).compute_s, measured);
  // Out of cache the streaming figure, where measured: 3·d values of 4 bytes against the cache.
  m.cache_bytes = 3 * 2000 * 4;
  m.compress_streaming_value_s[std::size_t(CompressionMethod::loco)] = 40e-9;
  EXPECT_DOUBLE_EQ(predict_step(w, m).compute_s, measured);  // 24 kB: in cache
  m.cache_bytes = 3 * 2000 * 4 - 1;
  const double out_of_cache = predict_step(w, m).compute_s;
  m.compress_streaming_value_s[std::size_t(CompressionMethod::loco)] = 0;
  EXPECT_NEAR(out_of_cache - predict_step(w, m).compute_s, 2000 * (40e-9 - 12e-9), 1e-15);
}

// A pass over the rows runs at the rate of the bytes of rows a rank holds (memory.resident_GBps:
// the first point's rate below it, linear in log(bytes) between points, memory's beyond the
// last), a rank holding a P-th of the rows' bytes, and the ranks taking turns on a core sharing
// its caches: SGD's fused pass over its share of a batch by rows, its margins' pass by columns;
// unknown rows stream from memory.
TEST(StepModel, RowsThatStayInTheCachesStreamAtTheirRate) {
  Machine m = machine();  // memory: 20 GB/s at 0.7, 14 GB/s
  m.cache_bytes = 1e9;    // the column decomposition's second pass: from a core's cache
  m.resident = {{4e6, 40e9}, {16e6, 20e9}};
  // The time the pass saves against streaming the same bytes from memory.
  const auto saved = [&](Decomposition decomposition, int P, std::int64_t rows) {
    Workload w;
    w.decomposition = decomposition;
    w.ranks = P;
    w.batch = 100;
    w.features = 1000;
    w.rows = rows;
    Workload unknown = w;
    unknown.rows = 0;
    return predict_step(unknown, m).compute_s - predict_step(w, m).compute_s;
  };
  const auto expect = [](double bytes, double rate) { return bytes / 14e9 - bytes / rate; };
  const double batch = 100 * (1000 * 4 + 8);                                        // at P = 1
  EXPECT_NEAR(saved(Decomposition::row, 1, 500), expect(batch, 40e9), 1e-15);       // 2 MB held
  EXPECT_NEAR(saved(Decomposition::row, 1, 1000), expect(batch, 40e9), 1e-15);      // 4 MB
  EXPECT_NEAR(saved(Decomposition::row, 1, 2000), expect(batch, 30e9), 1e-15);      // 8 MB
  EXPECT_NEAR(saved(Decomposition::row, 1, 8000), 0, 1e-15);                        // 32 MB
  EXPECT_NEAR(saved(Decomposition::row, 2, 2000), expect(batch / 2, 40e9), 1e-15);  // 4 MB
  // by columns at P = 2: every row of the batch, half the columns; 2000 rows: 4 MB a rank
  EXPECT_NEAR(saved(Decomposition::column, 2, 2000), expect(100 * (500 * 4 + 8), 40e9), 1e-15);
  // 4 ranks on 2 cores take turns, two to a core: their rows share its caches (8 MB a core;
  // the local work counts twice, the shared core's pace)
  m.cores = 2;
  EXPECT_NEAR(saved(Decomposition::row, 4, 4000), 2 * expect(batch / 4, 30e9), 1e-15);
  EXPECT_NEAR(saved(Decomposition::row, 2, 2000), expect(batch / 2, 40e9), 1e-15);
}

// An optimizer with state costs its calibrated figure per weight beyond SGD's update, in both
// decompositions (a P-th of the weights by columns); another optimizer's figure is ignored.
TEST(StepModel, AnOptimizerCostsItsUpdate) {
  Machine m = machine();
  m.update_value_s[std::size_t(OptimizerKind::adam)] = 3e-9;
  m.update_value_s[std::size_t(OptimizerKind::momentum)] = 1e-6;
  for (const Decomposition decomposition : {Decomposition::row, Decomposition::column}) {
    Workload w;
    w.decomposition = decomposition;
    w.ranks = 2;
    w.features = 2000;
    const double plain = predict_step(w, m).compute_s;
    w.optimizer = OptimizerKind::adam;
    const double weights = decomposition == Decomposition::row ? 2000 : 1000;
    EXPECT_NEAR(predict_step(w, m).compute_s - plain, weights * 3e-9, 1e-15);
  }
}

// A merge collective's arithmetic costs the calibrated figure per value merged on its critical
// path: nothing at one rank; at P = 2 half the gradient's values (the halving schedule's one
// reduce round), whether a payload element holds one code or two; at P = 3 the shifted trees' 2/3
// of it; gTop-k at P = 4 two rounds of k = 20 pairs. Methods without a merge ignore the figure.
TEST(StepModel, AMergeCostsItsMergedValues) {
  const auto extra = [](CompressionMethod method, int P, const char* aps_format = "e5m2") {
    Workload w;
    w.ranks = P;
    w.batch = 48;
    w.features = 2000;
    w.compression.method = method;
    w.compression.aps.format = aps_format;
    Machine m = machine();
    const double unpriced = predict_step(w, m).compute_s;
    m.merge_value_s[std::size_t(method)] = 10e-9;
    return predict_step(w, m).compute_s - unpriced;
  };
  EXPECT_EQ(extra(CompressionMethod::aps, 1), 0);
  EXPECT_NEAR(extra(CompressionMethod::aps, 2), 1000 * 10e-9, 1e-15);
  EXPECT_NEAR(extra(CompressionMethod::aps, 2, "e2m1"), 1000 * 10e-9, 1e-15);  // 2 codes a byte
  EXPECT_NEAR(extra(CompressionMethod::aps, 3), 2000.0 * 2 / 3 * 10e-9, 1e-15);
  EXPECT_NEAR(extra(CompressionMethod::cast, 4), 2000.0 * 3 / 4 * 10e-9, 1e-15);
  EXPECT_NEAR(extra(CompressionMethod::gtopk, 4), 2 * 20 * 10e-9, 1e-15);
  EXPECT_EQ(extra(CompressionMethod::loco, 4), 0);
}

// Where latency dominates (many ranks, few local columns, a slow network) the model picks
// s > 1; where the network is free it keeps s = 1.
TEST(StepModel, BestStepsFollowTheLatency) {
  Machine m = machine();
  m.latency_s = 200e-6;
  EXPECT_GT(perfmodel::best_s(column(64, 32, 28 * 64, 1), m), 1);
  m.latency_s = 1e-12;
  m.network_Bps = 1e15;
  EXPECT_EQ(perfmodel::best_s(column(2, 256, 2000, 1), m), 1);
}

// The packed Gram (E = b²s(s−1)/2 entries of the wire type) costs nothing beyond its entries
// while it fits the cache; once it outgrows it, the Gram streams it out to memory and the
// recurrence reads it back, each at least the stream's time, each hidden under that phase's
// own work when that is longer.
TEST(StepModel, AGramBeyondTheCacheStreamsUnlessItsPhasesTakeLonger) {
  Machine roomy = machine(), tight = machine();
  roomy.cache_bytes = 1e9;
  tight.cache_bytes = 1e6;
  const Workload small = column(1, 32, 28, 4);  // E = 6144 entries, 24.6 KB
  EXPECT_DOUBLE_EQ(predict_step(small, tight).compute_s, predict_step(small, roomy).compute_s);
  const Workload big = column(1, 32, 28, 64);  // E = 2 064 384 entries, 8.3 MB
  const double E = 32.0 * 32 * 64 * 63 / 2, stream = E * 4 / (20e9 * 0.7);
  const auto extra = [&] {
    return predict_step(big, tight).compute_s - predict_step(big, roomy).compute_s;
  };
  // Cheap entries and a fast recurrence: the stream out and the stream back both show.
  for (Machine* m : {&roomy, &tight}) m->gram_entry_s = 1e-15, m->scalar_Fps = 1e18;
  EXPECT_NEAR(extra(), (2 * stream - E * 1e-15) / 64, 1e-12);
  // Entries dearer than the stream (1 ns: 2.1 ms against 0.59 ms), and a recurrence at 2 GF/s
  // (2E flops: 2.1 ms): both phases hide it.
  for (Machine* m : {&roomy, &tight}) m->gram_entry_s = 1e-9, m->scalar_Fps = 2e9;
  EXPECT_DOUBLE_EQ(predict_step(big, tight).compute_s, predict_step(big, roomy).compute_s);
}

// The host BLAS path's scratch buffer: each pass over a packed Gram beyond the cache streams it
// once more (E entries of the 4-byte arithmetic), by input type; nothing while it fits.
TEST(StepModel, AGramFormedInScratchStreamsItsPasses) {
  Machine plain = machine(), scratch = machine();
  for (Machine* m : {&plain, &scratch}) m->cache_bytes = 1e6;
  scratch.gram_scratch_passes = 2;
  scratch.gram_bf16_scratch_passes = 3;
  Workload small = column(1, 32, 28, 4), big = column(1, 32, 28, 64);  // 24.6 KB, 8.3 MB
  const double E = 32.0 * 32 * 64 * 63 / 2, stream = E * 4 / (20e9 * 0.7);
  for (double input : {4.0, 2.0}) {
    for (Workload* w : {&small, &big}) w->gram_input_bytes = input;
    EXPECT_DOUBLE_EQ(predict_step(small, scratch).compute_s, predict_step(small, plain).compute_s);
    EXPECT_NEAR(predict_step(big, scratch).compute_s - predict_step(big, plain).compute_s,
                (input >= 4 ? 2 : 3) * stream / 64, 1e-12);
  }
}

// On one node a collective's bytes cost what calibrate measured at neighbouring sizes
// (network.transfer_us): linear between the points, in proportion below the first, at the last
// segment's rate beyond the last.
TEST(StepModel, BytesCostTheMeasuredTransferCurve) {
  Machine m = machine();                            // 10 GB/s
  EXPECT_DOUBLE_EQ(m.transfer_seconds(1e6), 1e-4);  // no curve: bytes over the bandwidth
  m.transfer = {{1e3, 1e-6}, {1e4, 4e-6}, {1e5, 10e-6}};
  EXPECT_DOUBLE_EQ(m.transfer_seconds(500), 0.5e-6);
  EXPECT_DOUBLE_EQ(m.transfer_seconds(1e3), 1e-6);
  EXPECT_DOUBLE_EQ(m.transfer_seconds(5.5e3), 2.5e-6);
  EXPECT_DOUBLE_EQ(m.transfer_seconds(1e4), 4e-6);
  EXPECT_DOUBLE_EQ(m.transfer_seconds(5.5e4), 7e-6);
  EXPECT_DOUBLE_EQ(m.transfer_seconds(1.9e5), 16e-6);
  // The step charges its collective's bytes per rank by the curve: CA-SGD at P = 2 sends its
  // whole packed message once per outer step (2(P-1)/P = 1).
  const Workload w = column(2, 32, 2000, 4);
  const double sent = predict_step(w, machine()).bytes * 4;
  ASSERT_GT(sent, 1e4);
  ASSERT_LT(sent, 1e5);
  EXPECT_NEAR(predict_step(w, m).bandwidth_s, (4e-6 + (sent - 1e4) * 6e-6 / 9e4) / 4, 1e-15);
  EXPECT_DOUBLE_EQ(predict_step(w, m).compute_s, predict_step(w, machine()).compute_s);
}

TEST(MachineFile, ParsesAndRefusesWithTheLine) {
  const std::string good =
      "name: t\nsource: hand\nmemory: {bandwidth_GBps: 10, cache_MB: 1}\n"
      "kernels: {stream_efficiency: 0.5, row_ns: 3, launch_us: 1, gemm_fp64_GFps: 1,\n"
      "          gemm_fp32_GFps: 2, gemm_bf16_GFps: 4, gram_entry_ns: 1, scalar_GFps: 1,\n"
      "          decode_ns: 0.5, ca_row_ns: 7, sync_us: 6, gram_call_us: 1.25}\n"
      "host: {sgd_step_us: 1.5, ca_outer_us: 3, ca_inner_us: 0.2, wait_overshoot_us: 9, cores: 2, "
      "switch_us: 4}\n"
      "network: {latency_us: 2, bandwidth_GBps: 5}\n";
  const Machine m = perfmodel::parse_machine(good, "m.yaml");
  EXPECT_EQ(m.name, "t");
  EXPECT_DOUBLE_EQ(m.memory_Bps, 10e9);
  EXPECT_DOUBLE_EQ(m.row_s, 3e-9);
  EXPECT_DOUBLE_EQ(m.latency_s, 2e-6);
  EXPECT_DOUBLE_EQ(m.network_Bps, 5e9);
  EXPECT_DOUBLE_EQ(m.sgd_step_host_s, 1.5e-6);
  EXPECT_DOUBLE_EQ(m.ca_outer_host_s, 3e-6);
  EXPECT_DOUBLE_EQ(m.ca_inner_host_s, 0.2e-6);
  EXPECT_DOUBLE_EQ(m.wait_overshoot_s, 9e-6);
  EXPECT_DOUBLE_EQ(m.decode_s, 0.5e-9);
  EXPECT_DOUBLE_EQ(m.ca_row_s, 7e-9);
  EXPECT_DOUBLE_EQ(m.sync_s, 6e-6);
  EXPECT_DOUBLE_EQ(m.gram_call_s, 1.25e-6);
  EXPECT_DOUBLE_EQ(m.cores, 2);
  EXPECT_DOUBLE_EQ(m.switch_s, 4e-6);
  const auto refused = [&](const std::string& text, const std::string& what) {
    try {
      perfmodel::parse_machine(text, "m.yaml");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused(good + "extra: 1\n", "m.yaml:9: extra: unknown key");
  std::string host_file = good;  // a host's kernels are synchronous: no sync_us
  host_file.replace(host_file.find(", sync_us: 6"), 12, "");
  EXPECT_EQ(perfmodel::parse_machine(host_file, "m.yaml").sync_s, 0);
  std::string no_calls = good;  // files written before the Gram's calls were counted
  no_calls.replace(no_calls.find(", gram_call_us: 1.25"), 20, "");
  EXPECT_EQ(perfmodel::parse_machine(no_calls, "m.yaml").gram_call_s, 0);
  // The second pass's rate: optional (absent: free), > 0 when given.
  EXPECT_EQ(m.reread_Bps, 0);
  std::string reread = good;
  reread.replace(reread.find("cache_MB: 1}"), 12, "cache_MB: 1, reread_GBps: 120}");
  EXPECT_DOUBLE_EQ(perfmodel::parse_machine(reread, "m.yaml").reread_Bps, 120e9);
  reread.replace(reread.find("reread_GBps: 120"), 16, "reread_GBps: 0");
  refused(reread, "m.yaml:3: memory.reread_GBps: must be > 0");
  // Each optimizer's update per weight beyond SGD's: optional.
  EXPECT_EQ(m.update_value_s[std::size_t(OptimizerKind::adam)], 0);
  std::string adam = good;
  adam.replace(adam.find("gram_call_us: 1.25}"), 19, "gram_call_us: 1.25, adam_ns: 2.5}");
  EXPECT_DOUBLE_EQ(
      perfmodel::parse_machine(adam, "m.yaml").update_value_s[std::size_t(OptimizerKind::adam)],
      2.5e-9);
  adam.replace(adam.find("adam_ns: 2.5"), 12, "adam_ns: -1");
  refused(adam, "kernels.adam_ns: must be > 0");
  // A cluster file leaves the node's cores out (each rank has its own); given, they need the
  // context switch.
  std::string cluster = good;
  cluster.replace(cluster.find("cores: 2, switch_us: 4"), 22, "switch_us: 4");
  EXPECT_EQ(perfmodel::parse_machine(cluster, "m.yaml").cores, 0);
  std::string no_switch = good;
  no_switch.replace(no_switch.find(", switch_us: 4"), 14, "");
  refused(no_switch, "host.switch_us: missing");
  refused(
      "network: {latency_us: 2}\nmemory: {bandwidth_GBps: 10, cache_MB: 1}\nkernels: {}\nhost: "
      "{}\n",
      "kernels.stream_efficiency: missing");
  std::string negative = good;
  negative.replace(negative.find("latency_us: 2"), 13, "latency_us: -2");
  refused(negative, "network.latency_us: must be > 0");
  // A library that takes bf16 as it is (oneDNN with AVX512-BF16) makes no scratch pass: the
  // calibration writes 0, which must read back.
  std::string passes = good;
  passes.replace(passes.find("gram_call_us: 1.25}"), 19,
                 "gram_call_us: 1.25, gram_scratch_passes: 2, gram_bf16_scratch_passes: 0}");
  EXPECT_EQ(perfmodel::parse_machine(passes, "m.yaml").gram_scratch_passes, 2);
  EXPECT_EQ(perfmodel::parse_machine(passes, "m.yaml").gram_bf16_scratch_passes, 0);
  EXPECT_EQ(m.gram_whole_rows, 0);  // absent: one call per block row
  std::string whole = good;
  whole.replace(whole.find("gram_call_us: 1.25}"), 19,
                "gram_call_us: 1.25, gram_whole_rows: 1024}");
  EXPECT_EQ(perfmodel::parse_machine(whole, "m.yaml").gram_whole_rows, 1024);
  whole.replace(whole.find("gram_whole_rows: 1024"), 21, "gram_whole_rows: -1");
  refused(whole, "kernels.gram_whole_rows: must be >= 0");
  passes.replace(passes.find("gram_bf16_scratch_passes: 0"), 27, "gram_bf16_scratch_passes: -1");
  refused(passes, "kernels.gram_bf16_scratch_passes: must be >= 0");
  EXPECT_TRUE(m.transfer.empty());  // absent: bytes over bandwidth_GBps
  EXPECT_EQ(m.network_ranks, 0);
  const auto with_curve = [&](const std::string& curve) {
    std::string text = good;
    text.replace(text.find("bandwidth_GBps: 5}"), 18,
                 "bandwidth_GBps: 5,\n  transfer_us: " + curve + "}");
    return text;
  };
  const Machine c =
      perfmodel::parse_machine(with_curve("[[1024, 0.5], [4096, 2]], ranks: 3"), "m.yaml");
  EXPECT_EQ(c.network_ranks, 3);
  ASSERT_EQ(c.transfer.size(), 2u);
  EXPECT_DOUBLE_EQ(c.transfer[1].first, 4096);
  EXPECT_DOUBLE_EQ(c.transfer[1].second, 2e-6);
  refused(with_curve("[[1024, 0.5], [1024, 2]]"),
          "m.yaml:9: network.transfer_us: bytes must increase and us must not decrease");
  refused(with_curve("[[1024, 0.5], [4096, 0.2]]"), "us must not decrease");
  refused(with_curve("[[1024, 0.5, 3]]"),
          "m.yaml:9: network.transfer_us: expected a [bytes, us] pair");
  refused(with_curve("[[1024, fast]]"), "expected a [bytes, us] pair of numbers");
  refused(with_curve("[[0, 1]]"), "bytes must be > 0");
  refused(with_curve("7"), "network.transfer_us: expected a list of [bytes, us] pairs");
  // The rate of a pass over the rows by the MB of them a rank holds: optional, not rising.
  EXPECT_TRUE(m.resident.empty());
  const auto with_resident = [&](const std::string& curve) {
    std::string text = good;
    text.replace(text.find("cache_MB: 1}"), 12, "cache_MB: 1, resident_GBps: " + curve + "}");
    return text;
  };
  const Machine r = perfmodel::parse_machine(with_resident("[[2, 40], [8, 30]]"), "m.yaml");
  ASSERT_EQ(r.resident.size(), 2u);
  EXPECT_DOUBLE_EQ(r.resident[1].first, 8e6);
  EXPECT_DOUBLE_EQ(r.resident[1].second, 30e9);
  refused(with_resident("[[2, 30], [8, 40]]"),
          "memory.resident_GBps: MB must increase and GBps must not increase");
  refused(with_resident("[[2, 0]]"), "memory.resident_GBps: MB must be > 0 and GBps > 0");
  // Each compressor's encode and decode per value: optional, by the deck's method names.
  EXPECT_EQ(m.compress_value_s[std::size_t(CompressionMethod::aps)], 0);
  const Machine coded =
      perfmodel::parse_machine(good + "compressors: {aps: 9.5, global-qsgd: 8}\n", "m.yaml");
  EXPECT_DOUBLE_EQ(coded.compress_value_s[std::size_t(CompressionMethod::aps)], 9.5e-9);
  EXPECT_DOUBLE_EQ(coded.compress_value_s[std::size_t(CompressionMethod::global_qsgd)], 8e-9);
  EXPECT_EQ(coded.compress_value_s[std::size_t(CompressionMethod::loco)], 0);
  const Machine streamed =
      perfmodel::parse_machine(good + "compressors_streaming: {loco: 17.5}\n", "m.yaml");
  EXPECT_DOUBLE_EQ(streamed.compress_streaming_value_s[std::size_t(CompressionMethod::loco)],
                   17.5e-9);
  EXPECT_EQ(streamed.compress_value_s[std::size_t(CompressionMethod::loco)], 0);
  refused(good + "compressors: {apps: 9}\n", "m.yaml:9: compressors.apps: unknown key");
  refused(good + "compressors: {loco: 0}\n", "compressors.loco: must be > 0");
  // Each merging method's arithmetic per value merged: optional; the others have no merge.
  const Machine merging =
      perfmodel::parse_machine(good + "merges: {aps: 9, gtopk: 12.5}\n", "m.yaml");
  EXPECT_DOUBLE_EQ(merging.merge_value_s[std::size_t(CompressionMethod::aps)], 9e-9);
  EXPECT_DOUBLE_EQ(merging.merge_value_s[std::size_t(CompressionMethod::gtopk)], 12.5e-9);
  EXPECT_EQ(merging.merge_value_s[std::size_t(CompressionMethod::cast)], 0);
  refused(good + "merges: {loco: 3}\n", "m.yaml:9: merges.loco: unknown key");
  refused(good + "merges: {aps: -1}\n", "merges.aps: must be > 0");
  std::string no_host = good;
  no_host.replace(no_host.find("host:"), 0, "#");
  refused(no_host, "host: expected a map of keys");
}

// The shipped H100 file, whose device and host figures are minisgd's as calibrated on an H200
// (the same SM and host path), gives minisgd's one-GPU steps as measured on that H200 within
// 15% (docs/gpu.md, "Measured on an H200 (2026-11-28)": medians of three runs, µs a step):
// the step model's overlap of the host and the device shows here (it summed them to 22-24 µs).
TEST(MachineFile, TheH100FileGivesTheMeasuredOneGpuSteps) {
  const Machine m =
      perfmodel::load_machine(std::string(MINISGD_MACHINES) + "/h100-infiniband.yaml");
  const auto step_us = [&](const std::string& deck, std::int64_t features) {
    const Config c = load_deck(std::string(MINISGD_PAPER_DECKS) + "/" + deck + ".yaml");
    return predict_step(perfmodel::workload_of(c, features, 1), m).total_s() * 1e6;
  };
  EXPECT_NEAR(step_us("higgs-sgd-fp32", 28), 13.07, 0.15 * 13.07);
  EXPECT_NEAR(step_us("higgs-casgd-mixed", 28), 11.75, 0.15 * 11.75);
  EXPECT_NEAR(step_us("epsilon-sgd-fp32", 2000), 15.54, 0.15 * 15.54);
  EXPECT_NEAR(step_us("epsilon-casgd-mixed", 2000), 12.56, 0.15 * 12.56);
}
