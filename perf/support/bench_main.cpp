// main() for the benchmarks: MPI (the compressors' one-rank communicator), Kokkos (its
// --kokkos-* arguments), then Google Benchmark, with the versions and the measured ceilings
// printed as context.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <cstdio>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/version.hpp"
#include "support/ceilings.hpp"

namespace {

int run(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("minisgd",
                              std::string(MINISGD_VERSION) + " (" + MINISGD_GIT_HASH + ")");
  benchmark::AddCustomContext("kokkos_execution_space", minisgd::ExecSpace::name());
  benchmark::AddCustomContext("kokkos_concurrency",
                              std::to_string(minisgd::ExecSpace().concurrency()));
  char bw[64];
  std::snprintf(bw, sizeof bw, "%.2f GB/s", minisgd::perf::triad_bandwidth() * 1e-9);
  benchmark::AddCustomContext("measured_triad_bandwidth", bw);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int code = run(argc, argv);  // Kokkos finalized before MPI
  MPI_Finalize();
  return code;
}
