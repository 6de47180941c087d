// The packed strictly block-lower Gram against a double reference, for every compiled
// (input, accumulator) pair and every path.
//
// Tolerance (the standard dot-product error bound): every entry is a dot product of length
// n accumulated in a format of unit roundoff u, so
//   |Ĝ − G| ≤ γ_n · Σ_k |y_rk·y_ck|,   γ_n = n·u / (1 − n·u),
// where G is the exact dot product of the stored input values. Products of two bf16 or fp16
// values are exact in fp32; inputs wider than the accumulator (fp64 into fp32) add 2u.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "minisgd/kernels/ca_sgd_kernels.hpp"
#include "minisgd/kernels/gram/gram.hpp"
#include "minisgd/precision/dispatch.hpp"
#include "minisgd/precision/format_spec.hpp"
#include "testkit/gram_reference.hpp"
#include "testkit/random_matrix.hpp"
#ifdef MINISGD_HAVE_CUBLAS
#include "minisgd/kernels/gram/cublas_kokkos.hpp"
#endif

using namespace minisgd;
using namespace minisgd::precision;

namespace {

/// The library path the automatic engine takes for same-precision T: cuBLAS in CUDA builds
/// with it, KokkosBlas elsewhere.
template <class T>
GramPath same_precision_library() {
#ifdef MINISGD_HAVE_CUBLAS
  if (gpu::cublas_gram_supported<T, T>()) return GramPath::cublas;
#endif
  return GramPath::blas;
}

double gamma(std::int64_t n, double u) { return double(n) * u / (1.0 - double(n) * u); }

template <class In, class Acc>
void check_team_kernel(const char* label) {
  const double u_acc = unit_roundoff(format_traits<Acc>::format);
  const double u_in = bytes_per_value(format_traits<In>::format) > sizeof(Acc) ? 2 * u_acc : 0.0;
  // b = 1, 8 (tiles narrower than a block row), 33 (a block row spans two tile rows).
  for (std::int64_t b : {1, 8, 33}) {
    const std::int64_t s = 5, n = 300;  // n spans ten k-chunks, the last one partial
    const Matrix<In> Y = testkit::random_rows<In>(s * b, n, unsigned(b));
    const Vector<Acc> G("G", gram_packed_size(s, b));
    gram_team(Y, b, G, Rounder{});
    const double tol = gamma(n, u_acc) + u_in;
    EXPECT_LE(testkit::worst_gram_error(Y, b, G), tol)
        << label << " b=" << b << " tolerance " << tol;
  }
}

}  // namespace

TEST(Gram, PackedLayout) {
  EXPECT_EQ(gram_packed_size(1, 32), 0);
  EXPECT_EQ(gram_packed_size(16, 32), 32 * 32 * 16 * 15 / 2);
  EXPECT_EQ(gram_row_offset(1, 8), 0);
  EXPECT_EQ(gram_row_offset(3, 8), 8 * 8 * 3);  // after block rows of widths b and 2b
}

TEST(Gram, TeamKernelEveryCompiledPair) {
  check_team_kernel<double, double>("fp64->fp64");
  check_team_kernel<double, float>("fp64->fp32");
  check_team_kernel<float, double>("fp32->fp64");
  check_team_kernel<float, float>("fp32->fp32");
  check_team_kernel<bf16, double>("bf16->fp64");
  check_team_kernel<bf16, float>("bf16->fp32");
  check_team_kernel<fp16, double>("fp16->fp64");
  check_team_kernel<fp16, float>("fp16->fp32");
}

// An emulated bf16 accumulator rounds after every addition: within γ_n(2^-8) (n = 64, so
// n·u = 1/4), and visibly less accurate than fp32 accumulation.
TEST(Gram, TeamKernelEmulatesANarrowAccumulator) {
  const std::int64_t s = 4, b = 8, n = 64;
  const Matrix<bf16> Y = testkit::random_rows<bf16>(s * b, n, 7);
  const Vector<float> G("G", gram_packed_size(s, b));
  gram_team(Y, b, G, Rounder::to({Format::bf16, {}}, Format::fp32, false, 0));
  const double err = testkit::worst_gram_error(Y, b, G);
  EXPECT_LE(err, gamma(n, 0x1p-8));
  EXPECT_GT(err, gamma(n, 0x1p-24));
}

// s = 2 … 16 covers every split of the recursive rectangles (odd and even halves, a lone
// block row at the bottom); b = 1 makes every block a single row.
TEST(Gram, BlasPathSamePrecision) {
  BlockLowerGram gram;
  // A named array: nvcc 11.8 cannot deduce a braced list of pairs in a range-for.
  const std::pair<std::int64_t, std::int64_t> shapes[] = {{2, 16}, {3, 16}, {5, 16},
                                                          {6, 16}, {7, 1},  {16, 8}};
  for (const auto& [s, b] : shapes) {
    const std::int64_t n = 257;
    {
      const Matrix<float> Y = testkit::random_rows<float>(s * b, n, unsigned(s));
      const Vector<float> G("G", gram_packed_size(s, b));
      EXPECT_EQ(gram.compute(Y, b, G, Rounder{}), same_precision_library<float>());
      EXPECT_LE(testkit::worst_gram_error(Y, b, G), gamma(n, 0x1p-24)) << "s=" << s << " b=" << b;
    }
    {
      const Matrix<double> Y = testkit::random_rows<double>(s * b, n, unsigned(100 + s));
      const Vector<double> G("G", gram_packed_size(s, b));
      EXPECT_EQ(gram.compute(Y, b, G, Rounder{}), same_precision_library<double>());
      EXPECT_LE(testkit::worst_gram_error(Y, b, G), gamma(n, 0x1p-53)) << "s=" << s << " b=" << b;
    }
  }
  const std::int64_t s = 6, b = 16;
  // A narrower accumulator is emulated: the portable kernel, never the library.
  const Matrix<float> Y = testkit::random_rows<float>(s * b, 32, 3);
  const Vector<float> G("G", gram_packed_size(s, b));
  EXPECT_EQ(gram.compute(Y, b, G, Rounder::to({Format::fp16, {}}, Format::fp32, false, 0)),
            GramPath::team);
}

namespace {

/// The path the automatic engine takes for inputs narrower than the accumulator: cuBLAS in
/// CUDA builds that have the pair, oneDNN for bf16 → fp32 where the CPU has AVX512-BF16, else
/// the inputs widened for the same-precision library.
template <class In, class Acc>
GramPath narrow_input_path(const BlockLowerGram& gram) {
#ifdef MINISGD_HAVE_CUBLAS
  if (gpu::cublas_gram_supported<In, Acc>()) return GramPath::cublas;
#endif
  if (std::is_same_v<In, bf16> && std::is_same_v<Acc, float> && gram.dnnl_available())
    return GramPath::dnnl;
  return GramPath::widened_blas;
}

/// One BlockLowerGram over shapes that grow, shrink (an epoch's last outer step) and change
/// width, so the widened buffer is made, reused for fewer rows and remade.
template <class In, class Acc>
void check_narrow_inputs(const char* label) {
  BlockLowerGram gram;
  const double u = unit_roundoff(format_traits<Acc>::format);
  const std::int64_t shapes[][3] = {{5, 8, 300}, {16, 4, 300}, {3, 8, 300}, {7, 1, 41}};
  for (const auto& [s, b, n] : shapes) {
    const Matrix<In> Y = testkit::random_rows<In>(s * b, n, unsigned(s + n));
    const Vector<Acc> G("G", gram_packed_size(s, b));
    EXPECT_EQ(gram.compute(Y, b, G, Rounder{}), (narrow_input_path<In, Acc>(gram))) << label;
    EXPECT_LE(testkit::worst_gram_error(Y, b, G), gamma(n, u))
        << label << " s=" << s << " b=" << b << " n=" << n;
  }
}

}  // namespace

// Inputs narrower than the accumulator, summed exactly: a library path, within γ_n of the
// exact Gram of the stored values (the widened inputs' products are exact).
TEST(Gram, NarrowInputsTakeALibrary) {
  check_narrow_inputs<bf16, float>("bf16->fp32");
  check_narrow_inputs<fp16, float>("fp16->fp32");
  check_narrow_inputs<bf16, double>("bf16->fp64");
  check_narrow_inputs<fp16, double>("fp16->fp64");
  check_narrow_inputs<float, double>("fp32->fp64");
}

// precision.gram_engine: portable takes the fixed-order team kernel for every pair, the same
// bits as calling it directly.
TEST(Gram, PortableEngineTakesTheTeamKernel) {
  BlockLowerGram gram;
  gram.set_engine(GramEngine::portable, false);
  const std::int64_t s = 6, b = 8, n = 77;
  const auto same_as_team = [&](auto in_tag, auto acc_tag, const char* label) {
    using In = typename decltype(in_tag)::type;
    using Acc = typename decltype(acc_tag)::type;
    const Matrix<In> Y = testkit::random_rows<In>(s * b, n, 5);
    const Vector<Acc> G("G", gram_packed_size(s, b)), T("T", gram_packed_size(s, b));
    EXPECT_EQ(gram.compute(Y, b, G, Rounder{}), GramPath::team) << label;
    gram_team(Y, b, T, Rounder{});
    const auto g = Kokkos::create_mirror_view_and_copy(HostSpace(), G);
    const auto t = Kokkos::create_mirror_view_and_copy(HostSpace(), T);
    for (std::int64_t i = 0; i < g.extent_int(0); ++i)
      ASSERT_EQ(g(i), t(i)) << label << " entry " << i;
  };
  same_as_team(type_tag<float>{}, type_tag<float>{}, "fp32->fp32");
  same_as_team(type_tag<double>{}, type_tag<double>{}, "fp64->fp64");
  same_as_team(type_tag<bf16>{}, type_tag<float>{}, "bf16->fp32");
  same_as_team(type_tag<float>{}, type_tag<double>{}, "fp32->fp64");
}

// The host BLAS runs the threads Kokkos has, unless the environment chose: OpenBLAS's own count
// read back (its default is a thread per core, for every rank).
TEST(Gram, HostBlasGetsKokkosThreads) {
  if (!Kokkos::SpaceAccessibility<HostSpace, MemSpace>::accessible)
    GTEST_SKIP() << "a device backend: the Gram's BLAS is the device's";
  if (std::getenv("OPENBLAS_NUM_THREADS") || std::getenv("MKL_NUM_THREADS"))
    GTEST_SKIP() << "the environment sets the BLAS threads";
  using GetThreads = int (*)();
  const auto get = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  if (!get) GTEST_SKIP() << "the BLAS loaded is not OpenBLAS";
  BlockLowerGram gram;
  EXPECT_EQ(get(), Kokkos::DefaultHostExecutionSpace().concurrency());
}

// The AVX512-BF16 path (oneDNN) against the portable kernel on the same bf16 inputs: each
// within γ_n(2^-24) of the exact value, so within 2γ_n of each other.
TEST(Gram, Avx512Bf16PathMatchesPortableKernel) {
  BlockLowerGram gram;
  if (!gram.dnnl_available())
    GTEST_SKIP() << "no AVX512-BF16 path here (CPU without avx512_bf16, oneDNN not built in, "
                    "or a device backend)";
  for (std::int64_t b : {1, 8, 32}) {
    const std::int64_t s = 16, n = 500;
    const Matrix<bf16> Y = testkit::random_rows<bf16>(s * b, n, unsigned(100 + b));
    const Vector<float> fast("fast", gram_packed_size(s, b)),
        portable("portable", gram_packed_size(s, b));
    EXPECT_EQ(gram.compute(Y, b, fast, Rounder{}), GramPath::dnnl);
    gram_team(Y, b, portable, Rounder{});
    const double tol = gamma(n, 0x1p-24);
    EXPECT_LE(testkit::worst_gram_error(Y, b, fast), tol) << "b=" << b;
    EXPECT_LE(testkit::worst_gram_error(Y, b, portable), tol) << "b=" << b;
  }
  EXPECT_NE(gram.dnnl_implementation().find("bf16"), std::string::npos)
      << gram.dnnl_implementation();
}
