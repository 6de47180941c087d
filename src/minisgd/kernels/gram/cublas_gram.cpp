#include "minisgd/kernels/gram/cublas_gram.hpp"

#include <cublas_v2.h>
#include <library_types.h>

#include <limits>
#include <stdexcept>
#include <string>

namespace minisgd::gpu {
namespace {

#if CUBLAS_VER_MAJOR < 11
#error "minisgd's cuBLAS path needs cuBLAS 11 (CUDA 11) or newer: cublasComputeType_t, bf16 GEMM"
#endif

// cublasGetStatusName is in the CUDA 11.5+ toolkits (cuBLAS 11.6+); older ones get a table.
#if CUBLAS_VERSION >= 11600
const char* status_name(cublasStatus_t s) { return cublasGetStatusName(s); }
#else
const char* status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_<unknown>";
}
#endif

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLAS error in ") + what + ": " + status_name(s));
}

cudaDataType_t data_type(GemmInput t) {
  switch (t) {
    case GemmInput::bf16: return CUDA_R_16BF;
    case GemmInput::fp16: return CUDA_R_16F;
    case GemmInput::fp32: return CUDA_R_32F;
    case GemmInput::fp64: return CUDA_R_64F;
  }
  throw std::logic_error("cublas: unknown GemmInput");
}

}  // namespace

const char* cublas_status_name(int status) { return status_name(cublasStatus_t(status)); }

const char* name(GemmInput t) {
  switch (t) {
    case GemmInput::bf16: return "bf16";
    case GemmInput::fp16: return "fp16";
    case GemmInput::fp32: return "fp32";
    case GemmInput::fp64: return "fp64";
  }
  return "?";
}

const char* name(GemmAccum t) { return t == GemmAccum::fp32 ? "fp32" : "fp64"; }

bool cublas_supports(GemmInput in, GemmAccum acc, bool tf32, std::string* why) {
  bool ok = false;
  switch (in) {
    case GemmInput::bf16:
    case GemmInput::fp16:
    case GemmInput::fp32: ok = acc == GemmAccum::fp32; break;
    case GemmInput::fp64: ok = acc == GemmAccum::fp64; break;
  }
  if (ok && tf32 && in != GemmInput::fp32) {
    if (why) *why = std::string("TF32 applies to fp32 inputs only (inputs are ") + name(in) + ")";
    return false;
  }
  if (!ok && why)
    *why = std::string("cuBLAS has no GEMM with ") + name(in) + " inputs and " + name(acc) +
           " accumulation (it has bf16/fp16/fp32 inputs with fp32, fp64 with fp64)";
  return ok;
}

CublasHandle::CublasHandle(cudaStream_t stream) : stream_(stream) {
  cublasHandle_t h = nullptr;
  check(cublasCreate(&h), "cublasCreate");
  handle_ = h;
  const cublasStatus_t s = cublasSetStream(h, stream);
  if (s != CUBLAS_STATUS_SUCCESS) {
    cublasDestroy(h);
    handle_ = nullptr;
    check(s, "cublasSetStream");
  }
  // Scalars (alpha, beta) are host values; results are left in device memory.
  cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
}

CublasHandle::~CublasHandle() {  // errors at teardown cannot be reported: ignored
  if (workspace_) cudaFree(workspace_);
  if (handle_) cublasDestroy(handle_);
}

void* CublasHandle::workspace(std::size_t bytes) {
  if (bytes <= workspace_bytes_) return workspace_;
  if (workspace_) cudaFree(workspace_);
  workspace_ = nullptr;
  workspace_bytes_ = 0;
  const cudaError_t e = cudaMalloc(&workspace_, bytes);
  if (e != cudaSuccess)
    throw std::runtime_error("cublas workspace: cudaMalloc of " + std::to_string(bytes) +
                             " bytes: " + cudaGetErrorString(e));
  workspace_bytes_ = bytes;
  return workspace_;
}

void gemm_abt(CublasHandle& h, GemmInput in, GemmAccum acc, int m, int n, int k, double alpha,
              const void* A, int lda, const void* B, int ldb, double beta, void* C, int ldc,
              bool tf32) {
  std::string why;
  if (!cublas_supports(in, acc, tf32, &why)) throw std::invalid_argument("gemm_abt: " + why);
  if (m < 0 || n < 0 || k < 0 || lda < (k > 0 ? k : 1) || ldb < (k > 0 ? k : 1) ||
      ldc < (n > 0 ? n : 1))
    throw std::invalid_argument("gemm_abt: bad sizes m=" + std::to_string(m) +
                                " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                                " lda=" + std::to_string(lda) + " ldb=" + std::to_string(ldb) +
                                " ldc=" + std::to_string(ldc));
  if (m == 0 || n == 0) return;
  cublasHandle_t hd = h.get();
  // Row-major C(m×n) = A·Bᵀ is column-major Cᵀ(n×m) = op(B')·A' where B' (k×n, ldb) and
  // A' (k×m, lda) are the column-major readings of B's and A's memory: op = transpose for
  // B', none for A'. So cuBLAS sees (m, n) = (n, m) and (A, B) = (B, A).
  if (acc == GemmAccum::fp64) {
    const double a = alpha, b = beta;
    check(cublasDgemm(hd, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &a, static_cast<const double*>(B), ldb,
                      static_cast<const double*>(A), lda, &b, static_cast<double*>(C), ldc),
          "cublasDgemm");
    return;
  }
  const float a = float(alpha), b = float(beta);
  if (in == GemmInput::fp32 && !tf32) {
    check(cublasSgemm(hd, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &a, static_cast<const float*>(B), ldb,
                      static_cast<const float*>(A), lda, &b, static_cast<float*>(C), ldc),
          "cublasSgemm");
    return;
  }
  // 16-bit inputs (or TF32): fp32 compute and scalars, fp32 output. CUBLAS_GEMM_DEFAULT lets
  // cuBLAS pick Tensor Core kernels (the *_TENSOR_OP algorithm values are deprecated since
  // cuBLAS 11 and behave the same).
  const cublasComputeType_t compute = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const cudaDataType_t t = data_type(in);
  check(cublasGemmEx(hd, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &a, B, t, ldb, A, t, lda, &b, C,
                     CUDA_R_32F, ldc, compute, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
}

namespace {
std::size_t element_size(GemmInput t) {
  return t == GemmInput::fp64 ? 8 : t == GemmInput::fp32 ? 4 : 2;
}
int as_int(std::int64_t v, const char* what) {
  if (v < 0 || v > std::numeric_limits<int>::max())
    throw std::invalid_argument(std::string("block_lower_gram: ") + what + " = " +
                                std::to_string(v) + " is outside cuBLAS' 32-bit int range");
  return int(v);
}
}  // namespace

void block_lower_gram(CublasHandle& h, GemmInput in, GemmAccum acc, std::int64_t rows,
                      std::int64_t cols, std::int64_t ldy, std::int64_t b, const void* Y,
                      void* packed, bool tf32) {
  if (b <= 0 || rows % b != 0)
    throw std::invalid_argument("block_lower_gram: rows (" + std::to_string(rows) +
                                ") must be a positive multiple of b (" + std::to_string(b) + ")");
  const std::int64_t s = rows / b;
  if (ldy < 1) ldy = 1;  // cols = 0: cuBLAS still wants a leading dimension >= 1
  const std::size_t in_size = element_size(in);
  const std::size_t out_size = acc == GemmAccum::fp64 ? 8 : 4;
  const char* y = static_cast<const char*>(Y);
  char* g = static_cast<char*>(packed);
  for (std::int64_t j = 1; j < s; ++j) {
    // Block row j: C (b × jb) = Y_j (b × cols) · [Y_0 … Y_{j−1}] (jb × cols)ᵀ.
    const std::int64_t offset = b * b * j * (j - 1) / 2;
    gemm_abt(h, in, acc, as_int(b, "b"), as_int(j * b, "j·b"), as_int(cols, "cols"), 1.0,
             y + std::size_t(j * b * ldy) * in_size, as_int(ldy, "ldy"), y, as_int(ldy, "ldy"), 0.0,
             g + std::size_t(offset) * out_size, as_int(j * b, "j·b"), tf32);
  }
}

}  // namespace minisgd::gpu
