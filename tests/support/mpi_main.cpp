// GoogleTest main for tests that run under MPI: every rank runs every test, rank 0 reports,
// and the exit code is agreed so mpirun/ctest see one verdict.
#include <gtest/gtest.h>
#include <mpi.h>

#include "minisgd/app/capabilities.hpp"
#include "minisgd/core/kokkos.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  minisgd::gpu::select_device_by_local_rank(MPI_COMM_WORLD, argc, argv);  // one GPU per rank
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int failed = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    if (rank != 0) {
      auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
    }
    failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  }
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
