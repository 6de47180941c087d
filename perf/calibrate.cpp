// Measures the figures of the step model (docs/performance_model.md) on this machine and prints
// them as a machine file:   mpirun -np P perf/calibrate [NAME] [--clock cpu] > this.yaml
// Kernel rates (γ) are timed on every rank at once (as P ranks of a node run), the slowest rank's
// figure kept, with minisgd's own kernels at two shapes each and fitted
// (SGD step: bytes at an effective bandwidth + a cost per row; Gram: flops at a rate + a cost
// per packed entry + a cost per library call; the recurrence and the widening of bf16 rows from
// CA-SGD's own kernels); the host's share of a step and CA-SGD's cost per row from minisgd's own
// training loop on a problem too small for its kernels to matter; the node's cores and a context
// switch; α from the same loop over every rank against each rank alone; the cost of a collective's
// bytes from the training communicator's AllReduce at 1 KiB to 16 MiB with every rank taking part
// (β at 1 MiB); each compressor's encode and decode per gradient value at one rank, and what its
// merges cost per value merged at two ranks.
#include <mpi.h>

#include <unistd.h>
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "minisgd/app/run.hpp"
#include "minisgd/comm/merge_plan.hpp"
#include "minisgd/comm/mpi_communicator.hpp"
#include "minisgd/compress/record.hpp"
#include "minisgd/compress/sparse.hpp"
#include "minisgd/config/deck.hpp"
#include "minisgd/core/huge_pages.hpp"
#include "minisgd/kernels/ca_sgd_kernels.hpp"
#include "minisgd/kernels/glm_kernels.hpp"
#include "minisgd/kernels/gram/gram.hpp"
#include "minisgd/kernels/sgd_kernels.hpp"
#include "minisgd/perfmodel/step_model.hpp"
#include "minisgd/precision/storage_types.hpp"
#include "minisgd/solvers/optimizer.hpp"
#include "support/ceilings.hpp"
#include "support/fixtures.hpp"
#include "support/local_compressor.hpp"
#include "support/scheduler.hpp"

namespace {

using namespace minisgd;
using perf::random_rows;

// --clock cpu: kernels and the loop timed in this process's CPU seconds (per thread of the
// execution space), for a machine shared with other work; the collectives stay in wall time
// (their cost is the ranks' synchronisation).
bool cpu_clock = false;

double cpu_seconds() { return perf::process_cpu_seconds() / double(ExecSpace().concurrency()); }

double now_seconds() {
  return cpu_clock
             ? cpu_seconds()
             : std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
                   .count();
}

// The shortest of `reps` fenced calls of f, after one warm-up call, on the chosen clock.
template <class F>
double best_seconds(int reps, F&& f) {
  return perf::best_seconds(reps, f, now_seconds);
}

// Seconds per SGD step (fp32, logistic) on b rows of d columns, streaming batches from a matrix
// of `bytes` (by default far larger than the caches).
double sgd_step_seconds(std::int64_t b, std::int64_t d, double bytes = double(1 << 27)) {
  const std::int64_t batches = std::max<std::int64_t>(4, std::int64_t(bytes) / (b * d * 4));
  const Matrix<float> X = random_rows<float>(batches * b, d);
  Vector<double> y("y", batches * b);
  Kokkos::deep_copy(y, 1.0);
  Vector<float> w("w", d), z("z", b), u("u", b), g("g", d);
  const int steps = int(std::max<std::int64_t>(200, batches));
  std::int64_t t = 0;
  return best_seconds(3,
                      [&] {
                        for (int k = 0; k < steps; ++k) {
                          sgd_gradient<Loss::logistic>(X, (t++ % batches) * b, y, w, z, false, u,
                                                       g);
                          sgd_update(w, g, 1.0f, 1e-3f);
                        }
                      }) /
         steps;
}

// Bytes/s of a second pass over rows in the cache: the column step's loss derivatives and
// gradient product after its margins (sgd_gradient with the margins given), b = 32 rows of
// 256 fp32 columns (32 KB, the 256-column paper decks' batch), the same batch every time.
double reread_rate() {
  const std::int64_t b = 32, d = 256, steps = 1000;
  const Matrix<float> X = random_rows<float>(b, d);
  Vector<double> y("y", b);
  Kokkos::deep_copy(y, 1.0);
  Vector<float> w("w", d), z("z", b), u("u", b), g("g", d);
  sgd_margins(X, 0, w, z);
  const double t = best_seconds(3, [&] {
    for (int k = 0; k < steps; ++k) sgd_gradient<Loss::logistic>(X, 0, y, w, z, true, u, g);
  });
  return double(b * d * 4) / std::max(t / steps, 1e-12);
}

// Seconds of CA-SGD's partial margins (fp32 arithmetic) over s = 16 batches of b = 32 rows of
// 2000 columns stored as S, from a matrix far larger than the caches.
template <class S>
double margins_seconds() {
  const std::int64_t s = 16, b = 32, n = 2000, calls = 64;
  const Matrix<S> X = random_rows<S>(calls * s * b, n);
  Kokkos::View<std::int64_t**, Kokkos::LayoutRight, MemSpace> first("first", calls, s);
  auto h = Kokkos::create_mirror_view(first);
  for (std::int64_t t = 0; t < calls; ++t)
    for (std::int64_t j = 0; j < s; ++j) h(t, j) = (t * s + j) * b;
  Kokkos::deep_copy(first, h);
  const Vector<float> w("w", n), r("r", s * b);
  return best_seconds(3,
                      [&] {
                        for (std::int64_t t = 0; t < calls; ++t)
                          partial_margins(X, Kokkos::subview(first, t, Kokkos::ALL()), b, w,
                                          precision::Rounder{}, r);
                      }) /
         calls;
}

// Seconds per bf16 value widened to fp32: what the partial margins on bf16 rows take beyond
// fp32's time for their (fewer) bytes; 0 when the widening hides under the memory stream.
double widening_seconds() {
  const double values = 16.0 * 32 * 2000, narrow = margins_seconds<precision::bf16>();
  const double wide = margins_seconds<float>();
  return std::max((narrow - wide * (2000.0 * 2 + 8) / (2000.0 * 4 + 8)) / values, 1e-12);
}

// Seconds per gradient value of one compressor's reduce() at one rank (encode and decode; the
// collective a copy or nothing), default parameters, on the paper decks' d = 2000 (in cache)
// or on d = 2^22 (streamed from memory): what perf/bench_compress times.
double compress_value_seconds(CompressionMethod method, std::int64_t d = 2000) {
  perf::LocalCompressor<float> one(method, d);
  const int calls = d > 100000 ? 1 : 50;
  return best_seconds(5,
                      [&] {
                        for (int c = 0; c < calls; ++c) one.reduce();
                      }) /
         (calls * double(d));
}

// Seconds per value merged by a merge collective: what one reduce() takes as rank 0 of two
// mirrored ranks (perf/support/mirror_communicator.hpp: no network) beyond its time alone, over
// the values merged at P = 2: half the gradient's for an elementwise merge, the k pairs of
// gTop-k's top-k merge. On the paper decks' d = 2000, but gTop-k with k = 2000 (d = 20 000 at
// density 0.1: the default's k = 20 would be lost in the noise of the selection's time).
// Global-QSGD with exponential dithering (standard dithering sums its integer codes in the
// network library's AllReduce).
double merge_value_seconds(CompressionMethod method) {
  const bool gtopk = method == CompressionMethod::gtopk;
  const std::int64_t d = gtopk ? 20000 : 2000;
  const std::string params = gtopk                                      ? "density: 0.1"
                             : method == CompressionMethod::global_qsgd ? "dithering: exponential"
                                                                        : "";
  perf::LocalCompressor<float> alone(method, d, 1, params), paired(method, d, 2, params);
  // The two alternated, each keeping its least: a slow spell of the machine spoils one round of
  // one of them, not their difference.
  const auto per_call = [](perf::LocalCompressor<float>& c) {
    constexpr int calls = 20;
    return best_seconds(3,
                        [&] {
                          for (int k = 0; k < calls; ++k) c.reduce();
                        }) /
           calls;
  };
  double least_alone = 1e30, least_paired = 1e30;
  for (int round = 0; round < 5; ++round) {
    least_alone = std::min(least_alone, per_call(alone));
    least_paired = std::min(least_paired, per_call(paired));
  }
  const double merged = gtopk ? double(compress::top_k_count(std::size_t(d), 0.1)) : d / 2.0;
  return std::max((least_paired - least_alone) / merged, 1e-12);
}

// Seconds per weight of an optimizer's update beyond plain SGD's, on the decks' d = 2000 (the
// weights and its state in a core's cache).
double update_value_seconds(OptimizerKind kind) {
  constexpr std::int64_t d = 2000;
  constexpr int calls = 100;
  const auto time = [&](OptimizerKind k) {
    Config c;
    c.solver.optimizer = k;
    const auto optimizer = make_optimizer<float>(c, d);
    const Vector<float> w("w", d), g("g", d);
    perf::fill_gradient(g);
    const StepSpec step{256, 0.01, 1.0};
    return best_seconds(5,
                        [&] {
                          for (int k = 0; k < calls; ++k) optimizer->update(w, g, step);
                        }) /
           calls;
  };
  return std::max((time(kind) - time(OptimizerKind::sgd)) / d, 1e-12);
}

template <class In, class Acc>
double gram_seconds(std::int64_t s, std::int64_t b, std::int64_t n) {  // the packed Gram
  const Matrix<In> Y = random_rows<In>(s * b, n);
  const Vector<Acc> G("G", gram_packed_size(s, b));
  BlockLowerGram gram;
  // Small Grams take a microsecond or two: time enough calls for the clock.
  const int calls = int(std::max<double>(1, 2e5 / double(gram_packed_size(s, b) * n)));
  return best_seconds(5,
                      [&] {
                        for (int k = 0; k < calls; ++k) gram.compute(Y, b, G, precision::Rounder{});
                      }) /
         calls;
}

// The path BlockLowerGram takes for In → fp32 here.
template <class In>
GramPath gram_path() {
  const std::int64_t s = 3, b = 2;
  const Matrix<In> Y = random_rows<In>(s * b, 4);
  const Vector<float> G("G", gram_packed_size(s, b));
  BlockLowerGram gram;
  return gram.compute(Y, b, G, precision::Rounder{});
}

// Passes over the packed Gram beyond writing it, of a path taken here: 2 for the host BLAS path
// (block rows formed in a scratch buffer, written, then read for the copy into place), 0 for a
// library that writes the packed rows itself (oneDNN, cuBLAS).
double gram_scratch_passes(GramPath path) {
  const bool blas = path == GramPath::blas || path == GramPath::widened_blas;
  return blas && Kokkos::SpaceAccessibility<HostSpace, MemSpace>::accessible ? 2 : 0;
}

// minisgd's inner recurrence (fp32, logistic) at the paper decks' CA-SGD shape (s = 16,
// b = 32), in the flops the model counts for it: 2 per packed Gram entry, 4 per row.
double recurrence_rate() {
  const int s = 16;
  const std::int64_t b = 32, rows = s * b;
  const Vector<float> G("G", gram_packed_size(s, b)), r("r", rows), u("u", rows), v("v", rows);
  Kokkos::deep_copy(G, 1e-3f);
  Kokkos::deep_copy(r, 0.5f);
  Coefficients k{decltype(Coefficients::coef)("coef", s + 1, s),
                 decltype(Coefficients::scale)("scale", s + 1)};
  Kokkos::deep_copy(k.coef, 1e-3);
  Kokkos::deep_copy(k.scale, 1.0);
  Vector<double> y("y", rows);
  Kokkos::deep_copy(y, 1.0);
  BatchRows first("first", s);
  auto h = Kokkos::create_mirror_view(first);
  for (int j = 0; j < s; ++j) h(j) = j * b;
  Kokkos::deep_copy(first, h);
  const double t = best_seconds(5, [&] {
    inner_recurrence<Loss::logistic>(G, r, k, y, first, b, s, precision::Rounder{}, u, v);
  });
  const double cross = double(b) * double(b) * s * (s - 1) / 2;
  return (2 * cross + 4.0 * double(rows)) / t;
}

// Seconds per empty one-iteration kernel of n launched back to back, each followed by a fence
// when `fenced`.
double empty_launch_seconds(bool fenced) {
  Vector<float> v("v", 1);
  const int n = fenced ? 500 : 2000;
  return best_seconds(3,
                      [&] {
                        for (int i = 0; i < n; ++i) {
                          Kokkos::parallel_for(
                              "calibrate::empty", Kokkos::RangePolicy<ExecSpace>(0, 1),
                              KOKKOS_LAMBDA(const std::int64_t) { v(0) += 1; });
                          if (fenced) fence("calibrate::sync");
                        }
                      }) /
         n;
}

// A device's wait for its kernels, as before each collective (comm/view_collectives.hpp): an
// empty launch and a fence, less the launch. A host's kernels are synchronous: none.
double sync_seconds(double launch) {
  if constexpr (!kAsyncKernels) return 0;
  return std::max(empty_launch_seconds(true) - launch, 1e-9);
}

// A few microseconds of dependent arithmetic: a training step's local work between two
// collectives.
double busy_work() {
  double x = 1.0;
  for (int i = 0; i < 4000; ++i) x = x * 0.999999 + 1e-9;
  return x;
}

// Seconds of one AllReduce of `bytes` as training sees it: each call after a step's worth of
// local work, no barrier between them, so a rank the scheduler delays delays the others (the
// slowest rank's mean over a block, less the work alone; the median of five blocks). The work
// is a step's: arithmetic, a kernel writing the floats sent, and reads of 4x as many other
// bytes (its inputs; CA-SGD at s = 64 writes an 8.3 MB Gram from its batches and reads it back
// in the recurrence between AllReduces). An 8 MiB AllReduce after such work took 20-40% longer
// (median of 12 blocks, four runs) than back to back after arithmetic alone, and the least of
// the blocks of the latter was 35-45% under CA-SGD's at s = 64 in training (its phase timers).
double allreduce_seconds(comm::Communicator& c, std::size_t bytes, int calls) {
  const std::size_t count = std::max<std::size_t>(1, bytes / sizeof(float));
  // The message in huge pages, as training's large messages are (CA-SGD's packed Gram).
  const auto buf = zeroed_in_huge_pages<Kokkos::View<float*, HostSpace>>("message", count);
  std::vector<float> inputs(4 * count, 1.0f);
  std::vector<double> blocks;
  double sink = 0;
  const auto block = [&](bool reduce) {
    const double t0 = MPI_Wtime();
    for (int k = 0; k < calls; ++k) {
      sink += busy_work();
      float read = 0;  // a value per cache line
      for (std::size_t i = 0; i < inputs.size(); i += 16) read += inputs[i];
      std::fill(buf.data(), buf.data() + count, read);
      if (reduce) c.allreduce(buf.data(), count, comm::Op::sum);
    }
    double t = (MPI_Wtime() - t0) / calls;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return t;
  };
  c.barrier();
  for (int r = 0; r < 6; ++r) {
    const double both = block(true), work = block(false);
    if (r > 0) blocks.push_back(std::max(both - work, 0.0));  // the first block warms up
  }
  if (sink < 0) std::puts("");
  std::nth_element(blocks.begin(), blocks.begin() + 2, blocks.end());
  return blocks[2];
}

// Seconds per step of minisgd's training loop, on this rank alone, for a problem of one
// column and `batch`-row batches (4096 steps an epoch) in the given precision preset: what a
// step costs beside its kernels (planning, the stepper's host to device copies, timers, the
// communicator call) and, from two batch sizes, what each row costs the loop. Over `comm`
// (default: this rank alone) and in `decomposition` (default column); in CPU time when `cpu`
// (default: --clock).
double loop_step_seconds(const std::string& solver, int batch, const std::string& preset,
                         MPI_Comm comm = MPI_COMM_SELF, const std::string& decomposition = "column",
                         bool cpu = cpu_clock) {
  const auto deck = [&](int epochs) {
    return parse_deck(
        "run: {seed: 1}\n"
        "data: {source: synthetic, synthetic: {kind: synth, rows: " +
            std::to_string(4096 * batch) +
            ", features: 1}}\n"
            "model: {loss: logistic, l2: 1.0e-3}\n"
            "solver: {decomposition: " +
            decomposition +
            ", step_size: 0.01, eval_every: 1000000000, "
            "batch_size: " +
            std::to_string(batch) + ", epochs: " + std::to_string(epochs) + ", " + solver +
            "}\nprecision: {preset: " + preset + "}\n",
        "calibrate");
  };
  comm::MpiCommunicator self(comm);
  const auto timed = [&](const Config& c) {  // seconds of the FOM window (wall), its steps
    std::ostringstream out, err;
    const double t0 = cpu ? cpu_seconds() : 0;
    const RunOutcome o = run(c, self, out, err);
    return std::make_pair(cpu ? cpu_seconds() - t0 : o.result.fom_seconds,
                          double(cpu ? o.result.iterations : o.result.fom_iterations));
  };
  const Config one = deck(1), five = deck(5);
  std::vector<double> runs;
  for (int r = 0; r < 3; ++r) {
    if (!cpu) {
      const auto [t, n] = timed(five);
      runs.push_back(t / std::max(n, 1.0));
    } else {  // the whole run's CPU time: the difference of two lengths leaves the steps
      const auto [t1, n1] = timed(one);
      const auto [t5, n5] = timed(five);
      runs.push_back((t5 - t1) / std::max(n5 - n1, 1.0));
    }
  }
  return *std::min_element(runs.begin(), runs.end());  // like the kernels: the best of three
}

// α as training meets it: minisgd's SGD loop over every rank (row decomposition, one row per
// rank and step, one value to reduce) against the same loop on each rank alone; the difference
// per step is the gradient AllReduce's 2⌈log2 P⌉ messages. It includes what a rank waits for
// the others between steps; AllReduces timed back to back or after synthetic work came out 1-6x
// off the steps on this machine, quiet or loaded.
double loop_latency_seconds(int P) {
  // (wall time whatever --clock says: a collective's cost is the ranks' synchronisation)
  const double together =
      loop_step_seconds("method: sgd", P, "fp32", MPI_COMM_WORLD, "row", /*cpu=*/false);
  const double alone =
      loop_step_seconds("method: sgd", 1, "fp32", MPI_COMM_SELF, "row", /*cpu=*/false);
  double extra = std::max(together - alone, 1e-9);
  MPI_Allreduce(MPI_IN_PLACE, &extra, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return extra / (2.0 * comm::ceil_log2(P));
}

// The loop's time per step less what the model already charges its kernels (`m` without host
// costs), on one column, with the presets of the paper decks (fp32 SGD, mixed CA-SGD): SGD per
// step; CA-SGD per row of an inner step (from batches of 32 and 1 row at s = 1), then per
// outer step from s = 1 and per inner step from s = 16 (one-row batches).
void host_costs(perfmodel::Machine& m) {
  perfmodel::Workload w;
  w.method = Method::ca_sgd;
  w.decomposition = Decomposition::column;
  w.features = 1;
  w.storage_bytes = w.gram_input_bytes = 2;  // mixed: bf16 X and Gram input, fp32 arithmetic
  w.arithmetic_bytes = w.wire_bytes = 4;
  const auto kernels = [&](int s, std::int64_t b) {
    w.s = s;
    w.batch = b;
    return perfmodel::predict_step(w, m).compute_s;
  };
  perfmodel::Workload sgd = w;
  sgd.method = Method::sgd;
  sgd.batch = 1;
  sgd.storage_bytes = sgd.gram_input_bytes = 4;
  m.sgd_step_host_s =
      loop_step_seconds("method: sgd", 1, "fp32") - perfmodel::predict_step(sgd, m).compute_s;
  const auto ca = [&](int s, int b) {
    return loop_step_seconds("method: ca-sgd, s: " + std::to_string(s), b, "mixed") - kernels(s, b);
  };
  const double one_row = ca(1, 1);
  m.ca_row_s = std::max((ca(1, 32) - one_row) / 31, 1e-12);
  // From here the model charges the one row of a step its ca_row_s.
  const double one = one_row - m.ca_row_s, sixteen = 16 * ca(16, 1);
  m.ca_inner_host_s = std::max((sixteen - one) / 15, 1e-12);
  m.ca_outer_host_s = std::max(one - m.ca_inner_host_s, 1e-12);
  m.sgd_step_host_s = std::max(m.sgd_step_host_s, 1e-12);
}

// Rows that stay in the caches from one pass over them to the next: the SGD step's rate at
// d = 2000 (its bytes over its time less the fitted row and launch costs) over matrices of 2,
// 4, .. 64 times a core's cache, on every rank of the node at once (as in training). Kept while
// the rate stays above memory's by 10% (each point at most the one before it: the caches only
// lose rows as a rank holds more); empty when even the first is not. The sizes are timed in
// rounds and each keeps its least time, as the network's are.
void resident_figures(perfmodel::Machine& m, std::int64_t b) {
  const double memory = m.memory_Bps * m.stream_efficiency, bytes = b * (2000.0 * 4 + 8);
  std::vector<std::pair<double, double>> least;  // (bytes a rank holds, seconds a step)
  for (double size = 2 * m.cache_bytes; size <= 64 * m.cache_bytes; size *= 2)
    least.emplace_back(size, 1e30);
  for (int round = 0; round < 3; ++round)
    for (auto& [size, t] : least) t = std::min(t, sgd_step_seconds(b, 2000, size));
  m.resident.clear();
  for (const auto& [size, t] : least) {
    double rate = bytes / std::max(t - b * m.row_s - 2 * m.launch_s, 1e-12);
    if (!m.resident.empty()) rate = std::min(rate, m.resident.back().second);
    if (rate < 1.1 * memory) break;
    m.resident.emplace_back(size, rate);
  }
}

// The kernel figures of this rank (γ), fitted as docs/performance_model.md describes.
perfmodel::Machine kernel_figures() {
  perfmodel::Machine m;
  m.memory_Bps = cpu_clock ? perf::triad_now().cpu : perf::triad_bandwidth();
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);  // a core's own cache (glibc; 0 unknown)
  m.cache_bytes = l2 > 0 ? double(l2) : 512e3;
  m.launch_s = empty_launch_seconds(false);
  m.sync_s = sync_seconds(m.launch_s);
  // SGD step = rows·(d·4 + 8)/(bw·eff) + rows·row + 2 launches: fit eff at d = 2000 (bytes
  // dominate) and row at d = 28 (rows dominate), each given the other.
  const std::int64_t b = 256;
  const double wide = sgd_step_seconds(b, 2000), narrow = sgd_step_seconds(b, 28);
  const double bytes_wide = b * (2000.0 * 4 + 8), bytes_narrow = b * (28.0 * 4 + 8);
  const double bw = m.memory_Bps, launch = m.launch_s;
  double row = 0, eff = 1;
  for (int it = 0; it < 20; ++it) {  // two equations, two unknowns
    eff = std::clamp(bytes_wide / bw / std::max(wide - b * row - 2 * launch, 1e-12), 0.01, 1.0);
    row = std::max(0.0, (narrow - bytes_narrow / (bw * eff) - 2 * launch) / b);
  }
  m.stream_efficiency = eff;
  m.row_s = std::max(row, 1e-12);
  resident_figures(m, b);
  m.decode_s = widening_seconds();
  // (After the widening: timed right before it, this loop left decode_ns 4x high, 0.041-0.048
  // against 0.009-0.014 ns, in eight calibrations of eight.)
  m.reread_Bps = reread_rate();
  // The packed Gram of s blocks of b = 32 rows: time = flops / rate + entries · entry + library
  // calls (one per block row, or one for the whole Gram: perfmodel::gram_calls). Each input
  // type's rate from its times on 2000 and 28 local columns at s = 16 (the difference leaves
  // entries and calls out); the entry and call costs from the mixed decks' bf16 Gram on one
  // column at s = 2 (one call, 1024 entries) and s = 16 (15 calls, or 1 on cuBLAS' whole-Gram
  // path; 122 880 entries), where the flops hardly count.
  const std::int64_t gb = 32;
  const auto entries = [&](std::int64_t s) { return double(gram_packed_size(s, gb)); };
  const auto flops = [&](std::int64_t s, std::int64_t n) {
    return 2.0 * gram_multiply_adds(s, gb, n);
  };
  const auto rate = [&](double wide, double narrow) {
    return (flops(16, 2000) - flops(16, 28)) / std::max(wide - narrow, 1e-12);
  };
  using precision::bf16;
  m.gemm_fp32_Fps =
      rate(gram_seconds<float, float>(16, gb, 2000), gram_seconds<float, float>(16, gb, 28));
  m.gemm_fp64_Fps =
      rate(gram_seconds<double, double>(16, gb, 2000), gram_seconds<double, double>(16, gb, 28));
  m.gemm_bf16_Fps =
      rate(gram_seconds<bf16, float>(16, gb, 2000), gram_seconds<bf16, float>(16, gb, 28));
  const auto fixed = [&](std::int64_t s) {  // beyond the flops, on one column
    return gram_seconds<bf16, float>(s, gb, 1) - flops(s, 1) / m.gemm_bf16_Fps;
  };
  const GramPath fp32_path = gram_path<float>(), bf16_path = gram_path<bf16>();
  m.gram_whole_rows = double(whole_gram_rows(bf16_path));
  const double calls = perfmodel::gram_calls(16, double(gb), m);
  const double two = fixed(2), sixteen = fixed(16);  // two: call + E(2)·entry
  const double entry = (sixteen - calls * two) / (entries(16) - calls * entries(2));
  m.gram_entry_s = std::max(entry, 1e-12);
  m.gram_call_s = std::max(two - entries(2) * m.gram_entry_s, 1e-12);
  m.gram_scratch_passes = gram_scratch_passes(fp32_path);
  m.gram_bf16_scratch_passes = gram_scratch_passes(bf16_path);
  m.scalar_Fps = recurrence_rate();
  for (const auto& [method, name] : names(CompressionMethod{}))
    if (method != CompressionMethod::none)
      m.compress_value_s[std::size_t(method)] = compress_value_seconds(method);
  for (const auto& [method, name] : names(CompressionMethod{}))
    if (method != CompressionMethod::none)
      m.compress_streaming_value_s[std::size_t(method)] =
          compress_value_seconds(method, std::int64_t(1) << 22);
  for (const auto& [method, name] : names(CompressionMethod{}))
    if (compress::merges_payloads(method))
      m.merge_value_s[std::size_t(method)] = merge_value_seconds(method);
  for (const OptimizerKind kind : {OptimizerKind::momentum, OptimizerKind::adam})
    m.update_value_s[std::size_t(kind)] = update_value_seconds(kind);
  return m;
}

void print_machine(const perfmodel::Machine& m, int P) {
  std::string curve;  // network.transfer_us, four pairs a line
  for (std::size_t i = 0; i < m.transfer.size(); ++i) {
    char pair[64];
    std::snprintf(pair, sizeof pair, "%s[%.0f, %.4g]", i % 4 ? ", " : (i ? ",\n    " : "\n    "),
                  m.transfer[i].first, m.transfer[i].second * 1e6);
    curve += pair;
  }
  const std::string transfer = curve.empty() ? "" : ",\n  transfer_us: [" + curve + "]";
  // ns per value, by the deck's method names, for the methods `has`
  const auto per_method = [](const perfmodel::PerMethod& figures, auto has) {
    std::string out;
    for (const auto& [method, name] : names(CompressionMethod{})) {
      if (!has(method)) continue;
      char entry[64];
      std::snprintf(entry, sizeof entry, "%s%s: %.4g", out.empty() ? "" : ", ", name,
                    std::max(figures[std::size_t(method)] * 1e9, 1e-3));
      out += entry;
    }
    return out;
  };
  const std::string compressors = per_method(
      m.compress_value_s, [](CompressionMethod c) { return c != CompressionMethod::none; });
  const std::string streaming = per_method(m.compress_streaming_value_s, [](CompressionMethod c) {
    return c != CompressionMethod::none;
  });
  const std::string merges = per_method(m.merge_value_s, compress::merges_payloads);
  std::string resident;  // memory.resident_GBps: none found, none written
  for (std::size_t i = 0; i < m.resident.size(); ++i) {
    char pair[64];
    std::snprintf(pair, sizeof pair, "%s[%.4g, %.4g]", i ? ", " : ",\n  resident_GBps: [",
                  m.resident[i].first * 1e-6, m.resident[i].second * 1e-9);
    resident += pair;
  }
  if (!resident.empty()) resident += "]";
  char sync[48] = "";  // devices only: a host's file leaves sync_us out
  if (m.sync_s > 0) std::snprintf(sync, sizeof sync, "  sync_us: %.4g\n", m.sync_s * 1e6);
  std::printf(
      "# written by perf/calibrate at %d rank(s); docs/performance_model.md\n"
      "name: %s\n"
      "source: \"perf/calibrate on this machine: triad, minisgd's SGD step at b = 256, d = 2000 "
      "and 28 (and d = 2000 on 2 to 64 times a core's cache a rank), its second pass at b = 32, "
      "d = 256 in cache, the packed Gram at s = 16, b "
      "= 32, n = 2000 and 28 and its bf16 form at s = 2 and "
      "16 on one column, CA-SGD's recurrence and "
      "partial margins (bf16, fp32) at s = 16, b = 32, the training loop on one column (%s "
      "time), the scheduler (two threads on one core; comm.emulate's wait), SGD's loop and "
      "AllReduce at 8 B and 1 KiB to 16 MiB over %d rank(s), each compressor's encode and "
      "decode at one rank and its merges at two mirrored ranks, d = 2000\"\n"
      "memory: {bandwidth_GBps: %.4g, cache_MB: %.4g, reread_GBps: %.4g%s}\n"
      "kernels:\n"
      "  stream_efficiency: %.3g\n  row_ns: %.4g\n  launch_us: %.4g\n%s"
      "  gemm_fp64_GFps: %.4g\n  gemm_fp32_GFps: %.4g\n  gemm_bf16_GFps: %.4g\n"
      "  gram_entry_ns: %.4g\n  gram_call_us: %.4g\n  gram_whole_rows: %g\n"
      "  gram_scratch_passes: %g\n"
      "  gram_bf16_scratch_passes: %g\n  scalar_GFps: %.4g\n  decode_ns: %.4g\n  "
      "ca_row_ns: %.4g\n  momentum_ns: %.4g\n  adam_ns: %.4g\n"
      "host: {sgd_step_us: %.4g, ca_outer_us: %.4g, ca_inner_us: %.4g, wait_overshoot_us: %.4g,\n"
      "       cores: %g, switch_us: %.4g}\n"
      "network: {latency_us: %.4g, bandwidth_GBps: %.4g%s%s}%s\n"
      "compressors: {%s}  # ns per gradient value, encode and decode at one rank, d = 2000\n"
      "compressors_streaming: {%s}  # the same at d = 2^22 (beyond the caches)\n"
      "merges: {%s}  # ns per value merged, at two mirrored ranks beyond one, d = 2000 "
      "(gtopk: k = 2000)\n",
      P, m.name.c_str(), cpu_clock ? "CPU" : "wall", P, m.memory_Bps * 1e-9, m.cache_bytes * 1e-6,
      m.reread_Bps * 1e-9, resident.c_str(), m.stream_efficiency, std::max(m.row_s * 1e9, 1e-3),
      m.launch_s * 1e6, sync, m.gemm_fp64_Fps * 1e-9, m.gemm_fp32_Fps * 1e-9,
      m.gemm_bf16_Fps * 1e-9, std::max(m.gram_entry_s * 1e9, 1e-3),
      std::max(m.gram_call_s * 1e6, 1e-3), m.gram_whole_rows, m.gram_scratch_passes,
      m.gram_bf16_scratch_passes, m.scalar_Fps * 1e-9, std::max(m.decode_s * 1e9, 1e-3),
      std::max(m.ca_row_s * 1e9, 1e-3),
      std::max(m.update_value_s[std::size_t(OptimizerKind::momentum)] * 1e9, 1e-3),
      std::max(m.update_value_s[std::size_t(OptimizerKind::adam)] * 1e9, 1e-3),
      std::max(m.sgd_step_host_s * 1e6, 1e-3), std::max(m.ca_outer_host_s * 1e6, 1e-3),
      std::max(m.ca_inner_host_s * 1e6, 1e-3), std::max(m.wait_overshoot_s * 1e6, 1e-3), m.cores,
      std::max(m.switch_s * 1e6, 1e-3), m.latency_s * 1e6, m.network_Bps * 1e-9,
      P > 1 ? (", ranks: " + std::to_string(P)).c_str() : "", transfer.c_str(),
      P > 1 ? "" : "  # not measured at one rank: placeholders", compressors.c_str(),
      streaming.c_str(), merges.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    comm::MpiCommunicator world(MPI_COMM_WORLD);
    const int P = world.size();
    std::string name = "this";  // arguments: [NAME] [--clock wall|cpu]
    for (int i = 1; i < argc; ++i) {
      if (std::string(argv[i]) == "--clock" && i + 1 < argc)
        cpu_clock = std::string(argv[++i]) == "cpu";
      else
        name = argv[i];
    }
    // Network: α from the training loop (loop_latency_seconds); what a collective's bytes cost
    // beyond it from AllReduces of 1 KiB to 16 MiB less one of 8 B, by bytes per rank (the
    // MPI library's protocols change with the size: on this node a 25 KB AllReduce cost 4x
    // what 1 MiB's rate predicts, and 16 MiB ran at a third of it); β from 1 MiB.
    // The sizes are timed in rounds and each keeps its least: a slow spell of this VM (the same
    // 1 MiB AllReduce took 125 and 580-715 us in calibrations seconds apart) then spoils one
    // round, not the curve.
    double alpha = 1e-6, beta_Bps = 10e9;
    std::vector<std::pair<double, double>> transfer;
    if (P > 1) {
      const double share = 2.0 * (P - 1) / P;  // of the payload, per rank
      // payloads of 1 KiB, 2 KiB, .. 16 MiB: every power of two, since the curve bends where
      // the messages leave a cache level (8 MiB, CA-SGD's packed Gram at s = 64, is one)
      for (int log2 = 10; log2 <= 24; ++log2)
        transfer.emplace_back(share * double(std::size_t(1) << log2), 1e30);
      for (int round = 0; round < 3; ++round) {
        const double small = allreduce_seconds(world, 8, 400);
        for (auto& [bytes, least] : transfer) {
          const std::size_t payload = std::size_t(std::llround(bytes / share));
          const int calls = std::clamp(int((std::size_t(64) << 20) / payload), 4, 200);
          least = std::min(least, allreduce_seconds(world, payload, calls) - small);
        }
      }
      for (std::size_t i = 0; i < transfer.size(); ++i)  // a point below its predecessor: noise
        transfer[i].second = std::max(transfer[i].second, i ? transfer[i - 1].second : 0.0);
      const auto& mib = transfer[20 - 10];  // 1 MiB
      beta_Bps = mib.first / std::max(mib.second, 1e-9);
      alpha = loop_latency_seconds(P);
    }
    world.barrier();
    perfmodel::Machine m = kernel_figures();
    host_costs(m);
    // At P > 1 as a step under comm.emulate meets it: every rank waits, then all meet in a
    // collective, so a step waits for the latest of the ranks, not one rank's (when the wait
    // was a sleep, a P = 2 SGD step under a 20 us emulated latency measured 52-59 us where one
    // rank's overshoot predicted 43-48).
    double one = 1;
    comm::Communicator& ranks = world;
    const auto meet = [&] { ranks.allreduce(&one, 1, comm::Op::max); };
    m.wait_overshoot_s = std::max(
        P > 1 ? perf::wait_overshoot_seconds(meet) : perf::wait_overshoot_seconds(), 1e-12);
    m.cores = perf::node_cores();
    m.switch_s = std::max(perf::context_switch_seconds(), 1e-12);
    // The slowest rank: least rates, largest costs.
    for (double* x : {&m.memory_Bps, &m.stream_efficiency, &m.reread_Bps, &m.gemm_fp64_Fps,
                      &m.gemm_fp32_Fps, &m.gemm_bf16_Fps, &m.scalar_Fps})
      MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    for (double* x : {&m.row_s, &m.launch_s, &m.sync_s, &m.gram_entry_s, &m.gram_call_s,
                      &m.decode_s, &m.ca_row_s, &m.sgd_step_host_s, &m.ca_outer_host_s,
                      &m.ca_inner_host_s, &m.wait_overshoot_s, &m.switch_s})
      MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    for (auto* figures : {&m.compress_value_s, &m.merge_value_s})
      MPI_Allreduce(MPI_IN_PLACE, figures->data(), int(figures->size()), MPI_DOUBLE, MPI_MAX,
                    MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, m.update_value_s.data(), int(m.update_value_s.size()), MPI_DOUBLE,
                  MPI_MAX, MPI_COMM_WORLD);
    // The resident curve: the points every rank kept (the same sizes on one node), least rates.
    int points = int(m.resident.size());
    MPI_Allreduce(MPI_IN_PLACE, &points, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    m.resident.resize(std::size_t(points));
    for (auto& point : m.resident)
      MPI_Allreduce(MPI_IN_PLACE, &point.second, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    m.latency_s = alpha;
    m.network_Bps = beta_Bps;
    m.transfer = transfer;
    m.name = name;
    if (world.rank() == 0) print_machine(m, P);
  }
  MPI_Finalize();
  return 0;
}
