#pragma once
// The Gram of a batch block on the GPU through cuBLAS (docs/gpu.md). Compiled only
// when MINISGD_HAVE_CUBLAS is defined. Free of Kokkos: it takes device pointers and a CUDA
// stream (kernels/gram/cublas_kokkos.hpp adapts Kokkos views and execution space instances).
//
// Layout: every matrix is row-major (C order) with a leading dimension (the distance in
// elements between consecutive rows), as minisgd's Matrix views are. cuBLAS is column-major;
// a row-major m×n matrix is the column-major n×m matrix of its transpose, so
//   C = A·Bᵀ (row-major)  <=>  Cᵀ = B·Aᵀ (column-major)  =  gemm(OP_T, OP_N, n, m, k, B, A)
// with B and A read in place (no copy, no transpose kernel).
//
// Paths (input, accumulation) -> cuBLAS call:
//   bf16, fp32 -> cublasGemmEx(CUDA_R_16BF, CUBLAS_COMPUTE_32F, C in CUDA_R_32F): Tensor Cores
//   fp16, fp32 -> cublasGemmEx(CUDA_R_16F,  CUBLAS_COMPUTE_32F, C in CUDA_R_32F): Tensor Cores
//   fp32, fp32 -> cublasSgemm, or with tf32 = true cublasGemmEx(CUBLAS_COMPUTE_32F_FAST_TF32)
//                 (Tensor Cores, inputs rounded to 10-bit mantissas inside the product)
//   fp64, fp64 -> cublasDgemm
// Any other pair (e.g. bf16 inputs with fp64 accumulation) has no cuBLAS routine:
// cublas_supports() says so and the calls throw std::invalid_argument; use the portable kernel.
//
// What is computed: CA-SGD uses only the strictly block-lower part of G = Y·Yᵀ, packed by
// block row as kernels/gram/gram.hpp lays it out (block row j = Y_j·[Y_0 … Y_{j−1}]ᵀ, b × jb,
// row-major, at offset b²·j(j−1)/2). block_lower_gram() computes exactly that with s−1 GEMMs
// (m = b, n = jb): the needed flops and no more, every call a Tensor Core GEMM. Not SYRK:
// cuBLAS has no SYRK with half-precision inputs, and SYRK computes whole diagonal blocks
// CA-SGD never reads. gram() gives the whole symmetric G in one GEMM (twice the flops) for
// callers that want it.
//
// Tensor Cores are used for any size on cuBLAS ≥ 11, fastest when k and the leading
// dimensions are multiples of 8 (16-bit inputs) and the pointers 16-byte aligned.
//
// Streams: every call is enqueued on the handle's stream and returns without synchronizing;
// inputs must be ready in stream order (produced on that stream, or fenced before).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

struct cublasContext;  // cuBLAS' opaque handle type, as <cublas_api.h> declares it

namespace minisgd::gpu {

enum class GemmInput { bf16, fp16, fp32, fp64 };
enum class GemmAccum { fp32, fp64 };

const char* name(GemmInput t);
const char* name(GemmAccum t);

/// Whether cuBLAS has a routine for this pair (see the table above); `why` gets the reason
/// when it has not.
bool cublas_supports(GemmInput in, GemmAccum acc, bool tf32 = false, std::string* why = nullptr);

/// One cuBLAS handle bound to one CUDA stream (an execution space instance). Not copyable;
/// create it on the device it will be used on (handles are per device).
class CublasHandle {
 public:
  explicit CublasHandle(cudaStream_t stream);
  ~CublasHandle();
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;

  cublasContext* get() const { return handle_; }
  cudaStream_t stream() const { return stream_; }
  /// At least `bytes` of device memory owned by the handle, kept between calls (it only
  /// grows; growing frees the old block, which waits for the device).
  void* workspace(std::size_t bytes);

 private:
  cublasContext* handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
};

/// C = alpha·A·Bᵀ + beta·C, all row-major, device pointers: A is m×k (leading dimension
/// lda ≥ k), B is n×k (ldb ≥ k), C is m×n (ldc ≥ n). A and B are of type `in`; C and the
/// scalars are float for GemmAccum::fp32 and double for GemmAccum::fp64. With `tf32` (fp32
/// inputs only) the product runs on Tensor Cores in TF32. Enqueued on h.stream(), not
/// synchronized. Throws std::invalid_argument for an unsupported pair or bad sizes and
/// std::runtime_error naming the cuBLAS status on failure.
void gemm_abt(CublasHandle& h, GemmInput in, GemmAccum acc, int m, int n, int k, double alpha,
              const void* A, int lda, const void* B, int ldb, double beta, void* C, int ldc,
              bool tf32 = false);

/// G = Y·Yᵀ (both triangles): Y is n×k row-major (ldy ≥ k) of type `in`, G is n×n row-major
/// (ldg ≥ n) of the accumulation type. One GEMM; see the header comment.
inline void gram(CublasHandle& h, GemmInput in, GemmAccum acc, int n, int k, const void* Y, int ldy,
                 void* G, int ldg, bool tf32 = false) {
  gemm_abt(h, in, acc, n, n, k, 1.0, Y, ldy, Y, ldy, 0.0, G, ldg, tf32);
}

/// The packed strictly block-lower Gram of the s = rows/b blocks of Y (rows × cols,
/// row-major, ldy ≥ cols, type `in`) into `packed` (b²·s(s−1)/2 values of the accumulation
/// type; kernels/gram/gram.hpp's layout): s−1 calls of gemm_abt, enqueued on h.stream().
void block_lower_gram(CublasHandle& h, GemmInput in, GemmAccum acc, std::int64_t rows,
                      std::int64_t cols, std::int64_t ldy, std::int64_t b, const void* Y,
                      void* packed, bool tf32 = false);

/// "CUBLAS_STATUS_NOT_SUPPORTED" for a cublasStatus_t value (as an int, so this header
/// needs no cuBLAS include).
const char* cublas_status_name(int status);

}  // namespace minisgd::gpu
