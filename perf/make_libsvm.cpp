// make_libsvm OUT ROWS FEATURES [NNZ]: a LIBSVM file for the loader benchmarks
// (perf/parse_rate.sh). Without NNZ a dense HIGGS-shaped file: labels 0/1, values N(0, 1)
// written with %.9g (2 700 000 x 28 is about 1.13 GB). With NNZ a sparse one: each row holds
// NNZ distinct features drawn uniformly, increasing, values N(0, 1) with %.6g, labels ±1 from
// the sign of a planted margin (600 000 x 10^6 with NNZ 100 is about 1.1 GB). A fixed seed: the
// same file on every machine.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: make_libsvm OUT ROWS FEATURES [NNZ]\n");
    return 2;
  }
  FILE* f = std::fopen(argv[1], "w");
  if (!f) {
    std::perror(argv[1]);
    return 2;
  }
  const long rows = std::atol(argv[2]);
  const long d = std::atol(argv[3]);
  const long nnz = argc == 5 ? std::atol(argv[4]) : 0;
  std::mt19937_64 g(1);
  std::normal_distribution<double> n(0, 1);
  if (nnz == 0) {
    for (long r = 0; r < rows; ++r) {
      std::fprintf(f, "%d", (g() & 1) ? 1 : 0);
      for (long j = 1; j <= d; ++j) std::fprintf(f, " %ld:%.9g", j, n(g));
      std::fputc('\n', f);
    }
    return std::fclose(f) == 0 ? 0 : 1;
  }
  std::vector<long> cols;
  std::vector<double> vals;
  for (long r = 0; r < rows; ++r) {
    cols.clear();
    while (long(cols.size()) < std::min(nnz, d)) {
      cols.push_back(long(g() % std::uint64_t(d)) + 1);
      if (long(cols.size()) == nnz) {
        std::sort(cols.begin(), cols.end());
        cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
      }
    }
    double z = 0;
    vals.resize(cols.size());
    for (std::size_t k = 0; k < cols.size(); ++k) {
      vals[k] = n(g);
      z += vals[k] * std::sin(double(cols[k]));
    }
    std::fprintf(f, "%d", z >= 0 ? 1 : -1);
    for (std::size_t k = 0; k < cols.size(); ++k) std::fprintf(f, " %ld:%.6g", cols[k], vals[k]);
    std::fputc('\n', f);
  }
  return std::fclose(f) == 0 ? 0 : 1;
}
