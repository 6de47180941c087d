// The MPI backend's 16-bit float AllReduce (run at 1, 2, 3 and 4 ranks): every reduction
// step is one correctly rounded addition in the format, so whatever order MPI reduces in,
// the result is within one ulp per step of the sequential rounded sum x_0 + x_1 + … in rank
// order; MAX is exact. Bytes are counted as 2 bytes a value.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "minisgd/comm/mpi_communicator.hpp"
#include "minisgd/precision/storage_types.hpp"
#include "support/test_support.hpp"

using namespace minisgd;
using namespace minisgd::precision;

namespace {

// Rank r's i-th value: a spread of signs and magnitudes, the same on every rank's view.
double value(int r, int i) {
  return std::sin(0.7 * i + 1.3 * r) * std::ldexp(1.0, (i * 7 + r * 3) % 11 - 5);
}

// Spacing of the format at |x| (M fraction bits).
double ulp(double x, int M) {
  int e = 0;
  std::frexp(std::fabs(x), &e);  // |x| in [2^(e-1), 2^e)
  return std::ldexp(1.0, e - 1 - M);
}

template <class T>
void check_sum(int M, comm::DType dtype) {
  comm::MpiCommunicator comm(MPI_COMM_WORLD);
  const int P = comm.size(), n = 1000;
  std::vector<T> mine(n);
  for (int i = 0; i < n; ++i) mine[i] = convert<T>(value(comm.rank(), i));
  comm.allreduce(mine.data(), n, dtype, comm::Op::sum);
  for (int i = 0; i < n; ++i) {
    float sequential = to_float(convert<T>(value(0, i)));
    double magnitude = std::fabs(sequential);
    for (int r = 1; r < P; ++r) {
      const float x = to_float(convert<T>(value(r, i)));
      sequential = to_float(convert<T>(sequential + x));
      magnitude += std::fabs(x);
    }
    // Every partial sum is at most Σ|x_r| in magnitude, so each step errs by < ulp(Σ|x_r|).
    // With two ranks there is one addition, and it is commutative: exact agreement.
    if (P <= 2) {
      EXPECT_EQ(to_float(mine[i]), sequential) << "i=" << i;
    }
    EXPECT_LE(std::fabs(to_float(mine[i]) - sequential), (P - 1) * ulp(magnitude, M)) << "i=" << i;
  }
  EXPECT_EQ(comm.stats()[comm::Kind::allreduce].bytes_sent,
            std::uint64_t(2.0 * (P - 1) / P * double(2 * n)));
}

template <class T>
void check_max(comm::DType dtype) {
  comm::MpiCommunicator comm(MPI_COMM_WORLD);
  const int P = comm.size(), n = 257;
  std::vector<T> mine(n);
  for (int i = 0; i < n; ++i) mine[i] = convert<T>(value(comm.rank(), i));
  comm.allreduce(mine.data(), n, dtype, comm::Op::max);
  for (int i = 0; i < n; ++i) {
    float best = to_float(convert<T>(value(0, i)));
    for (int r = 1; r < P; ++r) best = std::fmax(best, to_float(convert<T>(value(r, i))));
    EXPECT_EQ(to_float(mine[i]), best);
  }
}

}  // namespace

TEST(Allreduce16, Bf16SumIsTheRoundedSum) { check_sum<bf16>(7, comm::DType::bf16); }
TEST(Allreduce16, Fp16SumIsTheRoundedSum) { check_sum<fp16>(10, comm::DType::f16); }
TEST(Allreduce16, MaxIsExact) {
  check_max<bf16>(comm::DType::bf16);
  check_max<fp16>(comm::DType::f16);
}
