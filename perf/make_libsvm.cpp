// make_libsvm OUT ROWS FEATURES: a dense HIGGS-shaped LIBSVM file for the parse-rate benchmark
// (perf/parse_rate.sh). Labels 0/1, values N(0, 1) written with %.9g, a fixed seed: the same
// file on every machine (2 700 000 x 28 is about 1.13 GB).
#include <cstdio>
#include <cstdlib>
#include <random>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: make_libsvm OUT ROWS FEATURES\n");
    return 2;
  }
  FILE* f = std::fopen(argv[1], "w");
  if (!f) {
    std::perror(argv[1]);
    return 2;
  }
  const long rows = std::atol(argv[2]);
  const int d = std::atoi(argv[3]);
  std::mt19937_64 g(1);
  std::normal_distribution<double> n(0, 1);
  for (long r = 0; r < rows; ++r) {
    std::fprintf(f, "%d", (g() & 1) ? 1 : 0);
    for (int j = 1; j <= d; ++j) std::fprintf(f, " %d:%.9g", j, n(g));
    std::fputc('\n', f);
  }
  return std::fclose(f) == 0 ? 0 : 1;
}
