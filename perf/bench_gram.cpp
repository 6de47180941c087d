// The Gram of one CA-SGD outer step: the packed strictly block-lower part of Y·Yᵀ for s
// batches of b rows over the rank's n columns, b²·s(s−1)/2·n multiply-adds. Each path is
// reported in GF/s of those useful flops, beside one sgemm of the whole sb × sb Gram on the
// same shape (twice the flops) and beside this process's measured large-GEMM ceilings: on the
// host fp32 through KokkosBlas and bf16 through oneDNN when available; on a GPU with cuBLAS
// an 8192³ sgemm and an 8192³ bf16 → fp32 GEMM on Tensor Cores (the card's practical peaks).
#include <benchmark/benchmark.h>

#include <KokkosBlas3_gemm.hpp>

#include <string>
#include <type_traits>

#include "minisgd/kernels/gram/gram.hpp"
#include "minisgd/precision/storage_types.hpp"
#include "support/fixtures.hpp"
#ifdef MINISGD_HAVE_CUBLAS
#include "minisgd/kernels/gram/cublas_kokkos.hpp"
#endif

namespace {

using namespace minisgd;
using perf::random_rows;
using precision::bf16;

/// Flop/s of an m × m × m product timed by f, best of five after a warm-up.
template <class F>
double gemm_rate(std::int64_t m, F&& f) {
  return 2.0 * double(m) * double(m) * double(m) / perf::best_seconds(5, f);
}

#ifdef MINISGD_HAVE_CUBLAS
/// An m × m × m cuBLAS GEMM with inputs In and fp32 results, in flop/s.
template <class In>
double cublas_gemm_rate(std::int64_t m) {
  const Matrix<In> A = random_rows<In>(m, m);
  const Matrix<float> C("C", m, m);
  gpu::CublasHandle& h = gpu::cublas_handle(Kokkos::Cuda());
  return gemm_rate(m, [&] {
    gpu::gemm_abt(h, gpu::gemm_input<In>(), gpu::GemmAccum::fp32, int(m), int(m), int(m), 1.0,
                  A.data(), int(m), A.data(), int(m), 0.0, C.data(), int(m));
  });
}
#endif

/// An m × m × m fp32 GEMM through KokkosBlas (host BLAS), in flop/s; on a GPU with cuBLAS an
/// 8192³ sgemm.
double sgemm_ceiling() {
  static const double rate = [] {
#ifdef MINISGD_HAVE_CUBLAS
    return cublas_gemm_rate<float>(8192);
#else
    const std::int64_t m = 1024;
    const Matrix<float> A = random_rows<float>(m, m), C("C", m, m);
    return gemm_rate(m, [&] { KokkosBlas::gemm("N", "T", 1.0f, A, A, 0.0f, C); });
#endif
  }();
  return rate;
}

/// An m × m × m bf16 → fp32 product through oneDNN (block row 1 of a Gram of two blocks of m
/// rows), in flop/s; 0 without the AVX512-BF16 path. On a GPU with cuBLAS an 8192³ bf16 → fp32
/// GEMM on Tensor Cores.
double bf16_ceiling() {
  static const double rate = [] {
#ifdef MINISGD_HAVE_CUBLAS
    return cublas_gemm_rate<bf16>(8192);
#else
    BlockLowerGram gram;
    if (!gram.dnnl_available()) return 0.0;
    const std::int64_t m = 1024;
    const Matrix<bf16> Y = random_rows<bf16>(2 * m, m);
    const Vector<float> G("G", gram_packed_size(2, m));
    return gemm_rate(m, [&] { gram.compute(Y, m, G, precision::Rounder{}); });
#endif
  }();
  return rate;
}

void report(benchmark::State& state, double flops, double ceiling) {
  state.counters["GF/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["ceiling_GF/s"] = ceiling * 1e-9;
}

/// Whether BlockLowerGram::compute takes cuBLAS for In, Acc here.
template <class In, class Acc>
bool gpu_gram() {
#ifdef MINISGD_HAVE_CUBLAS
  return gpu::cublas_gram_supported<In, Acc>();
#else
  return false;
#endif
}

// Args: s, b, n.
template <class In, class Acc>
void BM_Gram(benchmark::State& state, GramPath path) {
  const std::int64_t s = state.range(0), b = state.range(1), n = state.range(2);
  const Matrix<In> Y = random_rows<In>(s * b, n);
  const Vector<Acc> G("G", gram_packed_size(s, b));
  BlockLowerGram gram;
  if (path == GramPath::dnnl && !gram.dnnl_available()) {
    state.SkipWithError("no AVX512-BF16 path (CPU, build or backend)");
    return;
  }
  if (path == GramPath::cublas && !gpu_gram<In, Acc>()) {
    state.SkipWithError("no cuBLAS Gram (a CUDA build with cuBLAS and a GPU)");
    return;
  }
  const auto form = [&] {
    GramPath taken = GramPath::team;
    if (path == GramPath::team)
      gram_team(Y, b, G, precision::Rounder{});
    else
      taken = gram.compute(Y, b, G, precision::Rounder{});
    fence();
    return taken;
  };
  // Untimed: kernels' code loaded, library handles and workspaces made (a GPU's first cuBLAS
  // call took 133 ms on an H100, the one iteration of the first Gram benchmark).
  const GramPath taken = form();
  if (taken != path) {  // widened-blas: only where neither oneDNN nor cuBLAS takes the pair
    state.SkipWithError(
        (std::string("the automatic engine takes ") + name(taken) + " here").c_str());
    return;
  }
  for (auto _ : state) form();
  const double ceiling =
      std::is_same_v<In, bf16> && bf16_ceiling() > 0 ? bf16_ceiling() : sgemm_ceiling();
  report(state, 2.0 * gram_multiply_adds(s, b, n), ceiling);
  // Seconds per block row: one library call each (s − 1 of them), what the one-column shapes
  // below show beside the flops.
  if (s > 1)
    state.counters["s_per_block_row"] = benchmark::Counter(
        double(s - 1), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// One sgemm of the whole sb × sb Gram (what a code without the packed layout would call).
void BM_SgemmWholeGram(benchmark::State& state) {
  const std::int64_t s = state.range(0), b = state.range(1), n = state.range(2);
  const Matrix<float> Y = random_rows<float>(s * b, n), G("G", s * b, s * b);
  KokkosBlas::gemm("N", "T", 1.0f, Y, Y, 0.0f, G);  // untimed, as in BM_Gram
  fence();
  for (auto _ : state) {
    KokkosBlas::gemm("N", "T", 1.0f, Y, Y, 0.0f, G);
    fence();
  }
  report(state, 2.0 * double(s * b) * double(s * b) * double(n), sgemm_ceiling());
}

// The paper decks' shapes: s = 16, b = 32 (sb = 512) over the columns of epsilon (2000; 500
// per rank at P = 4), HIGGS (28) and SUSY (18).
void shapes(benchmark::internal::Benchmark* bm) {
  for (std::int64_t n : {2000, 500, 28, 18}) bm->Args({16, 32, n});
#ifdef KOKKOS_ENABLE_CUDA
  // Larger blocks, where a GPU's GEMM can approach its peak (b = 32 keeps it launch bound).
  for (std::int64_t b : {256, 1024}) bm->Args({16, b, 2000});
#endif
  // CPU time of the whole process (the BLAS library's threads included): with the sgemm of
  // the same shape beside it, the robust fraction on a shared machine (perf/kernel_table.sh).
  bm->ArgNames({"s", "b", "n"})->UseRealTime()->MeasureProcessCPUTime();
}

// One column, b = 32, s = 2..16: the Gram's cost apart from its flops, a library call per
// block row (perf/calibrate fits it as kernels.gram_call_us). Not in perf/kernel_table.sh's
// default filter; run as  bench_gram --benchmark_filter='Gram(Dnnl|Blas).*/n:1/'
void one_column(benchmark::internal::Benchmark* bm) {
  for (std::int64_t s : {2, 4, 8, 16}) bm->Args({s, 32, 1});
  bm->ArgNames({"s", "b", "n"})->UseRealTime();
}

void BM_GramBlasFp32(benchmark::State& state) { BM_Gram<float, float>(state, GramPath::blas); }
void BM_GramDnnlBf16(benchmark::State& state) { BM_Gram<bf16, float>(state, GramPath::dnnl); }
void BM_GramTeamFp32(benchmark::State& state) { BM_Gram<float, float>(state, GramPath::team); }
void BM_GramTeamBf16(benchmark::State& state) { BM_Gram<bf16, float>(state, GramPath::team); }
void BM_GramWidenedBf16(benchmark::State& state) {
  BM_Gram<bf16, float>(state, GramPath::widened_blas);
}
void BM_GramCublasBf16(benchmark::State& state) { BM_Gram<bf16, float>(state, GramPath::cublas); }

BENCHMARK(BM_GramBlasFp32)->Apply(shapes);
BENCHMARK(BM_SgemmWholeGram)->Apply(shapes);
BENCHMARK(BM_GramDnnlBf16)->Apply(shapes);
BENCHMARK(BM_GramCublasBf16)->Apply(shapes);
BENCHMARK(BM_GramTeamFp32)->Apply(shapes);
BENCHMARK(BM_GramTeamBf16)->Apply(shapes);
BENCHMARK(BM_GramWidenedBf16)->Apply(shapes);
BENCHMARK(BM_GramBlasFp32)->Apply(one_column);
BENCHMARK(BM_GramDnnlBf16)->Apply(one_column);

}  // namespace
