// GPU tests (docs/gpu.md): the cuBLAS Gram against a host reference and the NCCL
// communicator against MPI. They need a CUDA build with cuBLAS/NCCL and a visible GPU; anywhere
// else each one reports itself SKIPPED with the reason (ctest shows the test as skipped).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "minisgd/app/capabilities.hpp"
#include "minisgd/comm/mpi_communicator.hpp"
#include "minisgd/core/kokkos.hpp"
#include "minisgd/precision/storage_types.hpp"
#include "testkit/gram_reference.hpp"
#include "testkit/random_matrix.hpp"
#ifdef MINISGD_HAVE_CUBLAS
#include "minisgd/kernels/gram/cublas_kokkos.hpp"
#endif
#ifdef MINISGD_HAVE_NCCL
#include "minisgd/comm/nccl_communicator.hpp"
#endif

namespace minisgd {
namespace {

/// "" when this process can use a GPU, else why not. (Unused in builds without cuBLAS and NCCL.)
[[maybe_unused]] std::string no_gpu() {
  std::string why;
  return gpu::visible_devices(&why) > 0 ? std::string() : why;
}

#ifdef MINISGD_HAVE_CUBLAS
/// Packed strictly block-lower Gram of Y on the GPU vs the same products in double on the host.
template <class In, class Acc>
void check_gram(std::int64_t s, std::int64_t b, std::int64_t cols, bool tf32, double tol) {
  const std::int64_t rows = s * b;
  const Matrix<In> Y = testkit::random_rows<In>(rows, cols, 7);
  Vector<Acc> packed("packed", b * b * s * (s - 1) / 2);
  gpu::cublas_block_lower_gram(Y, b, packed, tf32);
  fence();
  EXPECT_LE(testkit::worst_gram_error(Y, b, packed), tol) << "Gram error relative to sum |y_i y_j|";
}
#endif

TEST(Gpu, CublasGramMatchesHostReference) {
#ifndef MINISGD_HAVE_CUBLAS
  GTEST_SKIP() << "cuBLAS Gram " << gpu::cublas_build_reason();
#else
  if (const std::string why = no_gpu(); !why.empty()) GTEST_SKIP() << why;
  check_gram<double, double>(4, 8, 100, false, 1e-14);
  check_gram<float, float>(4, 8, 100, false, 1e-6);
  check_gram<float, float>(4, 8, 100, true, 1e-2);  // TF32: 10-bit mantissas in the product
  check_gram<precision::bf16, float>(4, 16, 264, false, 1e-6);
  check_gram<precision::fp16, float>(3, 16, 264, false, 1e-6);
  check_gram<precision::bf16, float>(16, 32, 28, false, 1e-6);  // the paper's s, b; HIGGS' n
  // Beyond gpu::kWholeGramRows rows: s − 1 GEMMs instead of the whole Gram and a packing kernel.
  check_gram<float, float>(5, 256, 64, false, 1e-6);
  check_gram<precision::bf16, float>(3, 512, 40, false, 1e-6);
  EXPECT_FALSE((gpu::cublas_gram_supported<precision::bf16, double>()));
#endif
}

TEST(Gpu, NcclMatchesMpi) {
#ifndef MINISGD_HAVE_NCCL
  GTEST_SKIP() << "NCCL communicator " << gpu::nccl_build_reason();
#else
  if (const std::string why = no_gpu(); !why.empty()) GTEST_SKIP() << why;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int on_node = 1;
  MPI_Comm_size(node, &on_node);
  MPI_Comm_free(&node);
  int fits = on_node <= gpu::visible_devices() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!fits) GTEST_SKIP() << "needs one GPU per rank: " << on_node << " ranks on a node";

  comm::MpiCommunicator mpi(MPI_COMM_WORLD);
  comm::NcclCommunicator nccl(MPI_COMM_WORLD, Kokkos::Cuda().cuda_stream());
  const int P = mpi.size(), me = mpi.rank();
  const std::size_t n = 1000;

  // Sum of f64 and max of f32 on device views: exact (integers), equal to MPI's.
  std::vector<double> h(n);
  for (std::size_t i = 0; i < n; ++i) h[i] = double(me * 1000 + i);
  Vector<double> d("d", n);
  Kokkos::deep_copy(
      d, Kokkos::View<double*, HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged> >(h.data(), n));
  nccl.allreduce(d.data(), n, comm::DType::f64, comm::Op::sum);
  static_cast<comm::Communicator&>(mpi).allreduce(h.data(), n, comm::Op::sum);
  auto back = Kokkos::create_mirror_view_and_copy(HostSpace(), d);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(back(i), h[i]) << i;

  Vector<float> f("f", n);
  Kokkos::deep_copy(f, float(me));
  nccl.allreduce(f.data(), n, comm::DType::f32, comm::Op::max);
  auto hf = Kokkos::create_mirror_view_and_copy(HostSpace(), f);
  EXPECT_EQ(hf(0), float(P - 1));

  // A host scalar (staged) and the byte counters, which follow MPI's rules.
  EXPECT_EQ(nccl.allreduce_value<std::int32_t>(1), P);
  EXPECT_EQ(nccl.stats()[comm::Kind::allreduce].bytes_sent,
            mpi.stats()[comm::Kind::allreduce].bytes_sent +
                std::uint64_t(2.0 * (P - 1) / P * 4 * double(n)) +  // the f32 max
                std::uint64_t(2.0 * (P - 1) / P * 4));              // the int32 value

  // Allgather, a ring sendrecv and a broadcast.
  Vector<std::int32_t> one("one", 1), all("all", P), got("got", 1);
  Kokkos::deep_copy(one, me);
  nccl.allgather(one.data(), all.data(), 1, comm::DType::i32);
  auto ha = Kokkos::create_mirror_view_and_copy(HostSpace(), all);
  for (int r = 0; r < P; ++r) EXPECT_EQ(ha(r), r);
  nccl.sendrecv(one.data(), 1, (me + 1) % P, got.data(), 1, (me + P - 1) % P, comm::DType::i32);
  auto hg = Kokkos::create_mirror_view_and_copy(HostSpace(), got);
  EXPECT_EQ(hg(0), (me + P - 1) % P);
  nccl.bcast(one.data(), 1, comm::DType::i32, 0);
  auto hb = Kokkos::create_mirror_view_and_copy(HostSpace(), one);
  EXPECT_EQ(hb(0), 0);
  nccl.barrier();
#endif
}

}  // namespace
}  // namespace minisgd
