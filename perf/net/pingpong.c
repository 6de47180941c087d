/* MPI ping-pong between ranks 0 and 1 for perf/net/links.sh measure: half round-trip time
 * and bandwidth at 8 B, 64 KiB, 1 MiB and 16 MiB. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int sizes[] = {8, 1 << 16, 1 << 20, 16 << 20};
  const int iters[] = {500, 50, 20, 5};
  char* buf = calloc(16 << 20, 1);
  for (int k = 0; k < 4; ++k) {
    const int n = sizes[k];
    for (int rep = 0; rep < 2; ++rep) { /* rep 0 warms up */
      MPI_Barrier(MPI_COMM_WORLD);
      double t = MPI_Wtime();
      for (int i = 0; i < iters[k]; ++i) {
        if (rank == 0) {
          MPI_Send(buf, n, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
          MPI_Recv(buf, n, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
          MPI_Recv(buf, n, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buf, n, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
        }
      }
      t = (MPI_Wtime() - t) / iters[k] / 2;
      if (rank == 0 && rep == 1)
        printf("pingpong %9d B: half-RTT %10.1f us  %8.3f Gbit/s\n", n, t * 1e6, n * 8 / t / 1e9);
    }
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
