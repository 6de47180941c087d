#include "minisgd/kernels/gram/gram_dnnl.hpp"

#include <dnnl.hpp>

#include <map>
#include <tuple>

#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
#include <omp.h>
#endif

#include "minisgd/core/kokkos.hpp"

namespace minisgd {

struct DnnlGram::State {
  using dims = dnnl::memory::dims;
  using dt = dnnl::memory::data_type;

  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  struct Matmul {
    dnnl::matmul::primitive_desc pd;
    dnnl::matmul primitive;
  };
  // One primitive per block-row shape (M = b, N = jb, K = n, row stride ld): creating one
  // costs far more than running it, and every outer step reuses the same shapes.
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>, Matmul> cache;

  // dst (M × N, f32) = src (M × K, bf16, rows ld apart) · weights (K × N), where the weights
  // are the rows of Y_0..Y_{j−1} read as columns (strides {1, ld}): no transposed copy.
  const Matmul& matmul(std::int64_t M, std::int64_t N, std::int64_t K, std::int64_t ld) {
    const auto key = std::make_tuple(M, N, K, ld);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    const dnnl::memory::desc src({M, K}, dt::bf16, dims{ld, 1});
    const dnnl::memory::desc weights({K, N}, dt::bf16, dims{1, ld});
    const dnnl::memory::desc dst({M, N}, dt::f32, dims{N, 1});
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, weights, dst), engine);
    return cache.emplace(key, Matmul{pd, dnnl::matmul(pd)}).first->second;
  }
};

DnnlGram::DnnlGram(std::unique_ptr<State> state) : state_(std::move(state)) {
  implementation_ = state_->matmul(32, 32, 64, 64).pd.impl_info_str();
}

DnnlGram::~DnnlGram() = default;

std::string DnnlGram::unavailable_reason() {
#if defined(__x86_64__) && defined(__GNUC__)
  if (!__builtin_cpu_supports("avx512bf16")) return "this CPU lacks AVX512-BF16";
  return "";
#else
  return "oneDNN's bf16 Gram is used on x86-64 CPUs with AVX512-BF16 only";
#endif
}

std::unique_ptr<DnnlGram> DnnlGram::create() {
  if (!unavailable_reason().empty()) return nullptr;
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
  // oneDNN gets the threads Kokkos has (one with the Serial backend), so MPI ranks that
  // share a node do not oversubscribe it.
  omp_set_num_threads(Kokkos::DefaultHostExecutionSpace().concurrency());
#endif
  return std::unique_ptr<DnnlGram>(new DnnlGram(std::make_unique<State>()));
}

void DnnlGram::compute(const precision::bf16* Y, std::int64_t rows, std::int64_t n, std::int64_t ld,
                       std::int64_t b, float* packed) {
  State& st = *state_;
  // oneDNN takes non-const handles; it only reads src and weights.
  auto* y = const_cast<precision::bf16*>(Y);
  for (std::int64_t j = 1; j * b < rows; ++j) {
    const State::Matmul& mm = st.matmul(b, j * b, n, ld);
    dnnl::memory src(mm.pd.src_desc(), st.engine, y + j * b * ld);
    dnnl::memory weights(mm.pd.weights_desc(), st.engine, y);
    dnnl::memory dst(mm.pd.dst_desc(), st.engine, packed + b * b * j * (j - 1) / 2);
    mm.primitive.execute(st.stream,
                         {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}});
  }
  st.stream.wait();
}

}  // namespace minisgd
