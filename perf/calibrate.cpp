// Measures the figures of the step model (docs/performance_model.md) on this machine and prints
// them as a machine file:   mpirun -np P perf/calibrate [NAME] > perf/machines/this.yaml
// Kernel rates (γ) are timed on every rank at once (as P ranks of a node run), the slowest rank's
// figure kept, with minisgd's own kernels at two shapes each and fitted
// (SGD step: bytes at an effective bandwidth + a cost per row; Gram: flops at a rate + a cost
// per packed entry); α and β come from the
// training communicator's AllReduce at 8 bytes and 8 MiB with every rank taking part.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "minisgd/comm/merge_plan.hpp"
#include "minisgd/comm/mpi_communicator.hpp"
#include "minisgd/kernels/glm_kernels.hpp"
#include "minisgd/kernels/gram/gram.hpp"
#include "minisgd/kernels/sgd_kernels.hpp"
#include "minisgd/precision/storage_types.hpp"
#include "support/ceilings.hpp"
#include "support/fixtures.hpp"

namespace {

using namespace minisgd;
using perf::best_seconds;
using perf::random_rows;

// Seconds per SGD step (fp32, logistic) on b rows of d columns, streaming batches from a matrix
// far larger than the caches.
double sgd_step_seconds(std::int64_t b, std::int64_t d) {
  const std::int64_t batches = std::max<std::int64_t>(4, (std::int64_t(1) << 27) / (b * d * 4));
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

template <class In, class Acc>
double gram_seconds(std::int64_t s, std::int64_t b, std::int64_t n) {  // the packed Gram
  const Matrix<In> Y = random_rows<In>(s * b, n);
  const Vector<Acc> G("G", gram_packed_size(s, b));
  BlockLowerGram gram;
  return best_seconds(5, [&] { gram.compute(Y, b, G, precision::Rounder{}); });
}

double scalar_rate() {  // dependent multiply-adds of a small dense triangle (the recurrence)
  const int n = 512;
  std::vector<double> a(std::size_t(n) * n, 0.5), x(n, 1.0);
  double sink = 0;
  const double t = best_seconds(5, [&] {
    for (int i = 0; i < n; ++i) {
      double acc = 0;
      for (int j = 0; j < i; ++j) acc += a[std::size_t(i) * n + j] * x[j];
      x[i] = 1.0 / (1.0 + acc * 1e-9);
    }
    sink += x[n - 1];
  });
  if (sink < 0) std::puts("");
  return double(n) * (n - 1) / t;  // 2 flops per multiply-add, half the square
}

double launch_seconds() {
  Vector<float> v("v", 1);
  const int n = 2000;
  return best_seconds(3,
                      [&] {
                        for (int i = 0; i < n; ++i)
                          Kokkos::parallel_for(
                              "calibrate::empty", Kokkos::RangePolicy<ExecSpace>(0, 1),
                              KOKKOS_LAMBDA(const std::int64_t) { v(0) += 1; });
                      }) /
         n;
}

// Seconds of one AllReduce of `bytes`, the slowest rank, best of reps.
double allreduce_seconds(comm::Communicator& c, std::size_t bytes) {
  std::vector<double> buf(std::max<std::size_t>(1, bytes / 8), 1.0);
  double best = 1e30;
  for (int r = 0; r < 20; ++r) {
    c.barrier();
    const double t0 = MPI_Wtime();
    c.allreduce(buf.data(), buf.size(), comm::Op::sum);
    double t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    best = std::min(best, t);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    comm::MpiCommunicator world(MPI_COMM_WORLD);
    const int P = world.size(), rank = world.rank();
    const std::string name = argc > 1 ? argv[1] : "this";

    // Network: α from a one-value AllReduce (2⌈log2 P⌉ messages), β from 8 MiB.
    double alpha = 1e-6, beta_Bps = 10e9;
    if (P > 1) {
      const double small = allreduce_seconds(world, 8);
      const double big_bytes = 8 << 20, big = allreduce_seconds(world, std::size_t(big_bytes));
      const double messages = 2.0 * comm::ceil_log2(P);
      alpha = small / messages;
      beta_Bps = 2.0 * (P - 1) / P * big_bytes / std::max(big - small, 1e-9);
    }
    {
      world.barrier();
      double bw = perf::triad_bandwidth();
      double launch = launch_seconds();
      // SGD step = rows·(d·4 + 8)/(bw·eff) + rows·row + 2 launches: fit eff at d = 2000 (bytes
      // dominate) and row at d = 28 (rows dominate), each given the other.
      const std::int64_t b = 256;
      const double wide = sgd_step_seconds(b, 2000), narrow = sgd_step_seconds(b, 28);
      const double bytes_wide = b * (2000.0 * 4 + 8), bytes_narrow = b * (28.0 * 4 + 8);
      double row = 0, eff = 1;
      for (int it = 0; it < 20; ++it) {  // two equations, two unknowns
        eff = std::clamp(bytes_wide / bw / std::max(wide - b * row - 2 * launch, 1e-12), 0.01, 1.0);
        row = std::max(0.0, (narrow - bytes_narrow / (bw * eff) - 2 * launch) / b);
      }
      // The packed Gram at the paper decks' CA-SGD shape (s = 16, b = 32): time = flops / rate
      // + entries · entry; rate from 2000 local columns, entry from 28 (fp32), rates of the
      // other input types at 2000 given that entry cost.
      const std::int64_t gs = 16, gb = 32;
      const double entries = double(gram_packed_size(gs, gb));
      const auto flops = [&](std::int64_t n) { return 2.0 * gram_multiply_adds(gs, gb, n); };
      const double t32 = gram_seconds<float, float>(gs, gb, 2000);
      const double t32_narrow = gram_seconds<float, float>(gs, gb, 28);
      double entry = 0, g32 = flops(2000) / t32;
      for (int it = 0; it < 20; ++it) {
        g32 = flops(2000) / std::max(t32 - entries * entry, 1e-12);
        entry = std::max(0.0, (t32_narrow - flops(28) / g32) / entries);
      }
      const auto rate = [&](double t) {
        return flops(2000) / std::max(t - entries * entry, 1e-12);
      };
      double g64 = rate(gram_seconds<double, double>(gs, gb, 2000));
      double g16 = rate(gram_seconds<precision::bf16, float>(gs, gb, 2000));
      double scalar = scalar_rate();
      // The slowest rank: least rates, largest costs.
      for (double* x : {&bw, &eff, &g64, &g32, &g16, &scalar})
        MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
      for (double* x : {&row, &launch, &entry})
        MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (rank == 0)
        std::printf(
            "# written by perf/calibrate at %d rank(s); docs/performance_model.md\n"
            "name: %s\n"
            "source: \"perf/calibrate on this machine: triad, minisgd's SGD step at b = 256, d = "
            "2000 and 28, the packed Gram at s = 16, b = 32, n = 2000 and 28, AllReduce at 8 B and "
            "8 MiB "
            "over %d rank(s)\"\n"
            "memory: {bandwidth_GBps: %.4g}\n"
            "kernels:\n"
            "  stream_efficiency: %.3g\n  row_ns: %.4g\n  launch_us: %.4g\n"
            "  gemm_fp64_GFps: %.4g\n  gemm_fp32_GFps: %.4g\n  gemm_bf16_GFps: %.4g\n"
            "  gram_entry_ns: %.4g\n  scalar_GFps: %.4g\n"
            "network: {latency_us: %.4g, bandwidth_GBps: %.4g}%s\n",
            P, name.c_str(), P, bw * 1e-9, eff, std::max(row * 1e9, 1e-3), launch * 1e6, g64 * 1e-9,
            g32 * 1e-9, g16 * 1e-9, std::max(entry * 1e9, 1e-3), scalar * 1e-9, alpha * 1e6,
            beta_Bps * 1e-9, P > 1 ? "" : "  # not measured at one rank: placeholders");
    }
  }
  MPI_Finalize();
  return 0;
}
