#pragma once
// Kokkos side of the cuBLAS Gram (kernels/gram/cublas_gram.hpp): one cuBLAS handle per Cuda
// execution space instance, bound to exec.cuda_stream(), and the packed block-lower Gram of
// kernels/gram/gram.hpp on Matrix/Vector views. Compiled only with MINISGD_HAVE_CUBLAS (which
// implies Kokkos with CUDA).
//
// Used by the CA-SGD Gram (BlockLowerGram::compute in kernels/gram/gram.cpp):
//   if (gpu::cublas_gram_supported<In, Acc>(tf32))
//     gpu::cublas_block_lower_gram(Y, b, packed, tf32);   // GramPath::cublas
// computes exactly what gram_team computes (without rounding emulation: only when the
// accumulation Rounder is the identity) on the default Cuda instance, or on a given one.
// The result is ready in that instance's stream order; fence before reading it on the host
// or handing it to a communicator (minisgd's collectives fence).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/kernels/gram/cublas_gram.hpp"
#include "minisgd/kernels/gram/gram.hpp"
#include "minisgd/kernels/tuning.hpp"
#include "minisgd/precision/storage_types.hpp"

namespace minisgd::gpu {

/// The handle of an execution space instance (keyed by its stream), created on first use on
/// the current device and destroyed at Kokkos::finalize (a finalize hook).
CublasHandle& cublas_handle(const Kokkos::Cuda& exec);

template <class T>
constexpr bool is_gemm_input_v =
    std::is_same_v<T, double> || std::is_same_v<T, float> || std::is_same_v<T, precision::bf16> ||
    std::is_same_v<T, precision::fp16>;

template <class T>
constexpr GemmInput gemm_input() {
  static_assert(is_gemm_input_v<T>, "cuBLAS Gram inputs: double, float, bf16, fp16");
  if constexpr (std::is_same_v<T, double>)
    return GemmInput::fp64;
  else if constexpr (std::is_same_v<T, float>)
    return GemmInput::fp32;
  else if constexpr (std::is_same_v<T, precision::bf16>)
    return GemmInput::bf16;
  else
    return GemmInput::fp16;
}

template <class T>
constexpr GemmAccum gemm_accum() {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, float>,
                "cuBLAS Gram accumulation: double or float");
  return std::is_same_v<T, double> ? GemmAccum::fp64 : GemmAccum::fp32;
}

/// Whether cuBLAS has a GEMM for inputs In with accumulation Acc (see cublas_gram.hpp).
template <class In, class Acc>
bool cublas_gram_supported(bool tf32 = false) {
  if constexpr (is_gemm_input_v<In> && (std::is_same_v<Acc, double> || std::is_same_v<Acc, float>))
    return cublas_supports(gemm_input<In>(), gemm_accum<Acc>(), tf32);
  else
    return false;
}

/// kernels/gram/gram.hpp's packed strictly block-lower Gram of Y (rows a multiple of b) on exec's
/// stream, not fenced: up to kWholeGramRows rows (kernels/tuning.hpp) the whole Gram and a
/// packing kernel, beyond them s−1 GEMMs (block_lower_gram). minisgd's bf16/fp16 have
/// __nv_bfloat16's/__half's bit layout, so the views go to cuBLAS as they are.
template <class In, class Acc>
void cublas_block_lower_gram(const Matrix<In>& Y, std::int64_t b, const Vector<Acc>& packed,
                             bool tf32 = false, const Kokkos::Cuda& exec = Kokkos::Cuda()) {
  static_assert(sizeof(In) == (std::is_same_v<In, double>  ? 8
                               : std::is_same_v<In, float> ? 4
                                                           : 2),
                "storage type size must match the CUDA type");
  const std::int64_t rows = std::int64_t(Y.extent(0)), cols = std::int64_t(Y.extent(1));
  const std::int64_t s = b > 0 ? rows / b : 0;
  if (std::int64_t(packed.extent(0)) < gram_packed_size(s, b))
    throw std::invalid_argument("cublas_block_lower_gram: packed holds " +
                                std::to_string(packed.extent(0)) + " values, needs " +
                                std::to_string(gram_packed_size(s, b)));
  const std::int64_t ldy = rows > 1 ? std::int64_t(Y.stride_0()) : cols;
  CublasHandle& h = cublas_handle(exec);
  if (s <= 2 || rows % b != 0 || rows > kWholeGramRows || cols == 0) {
    block_lower_gram(h, gemm_input<In>(), gemm_accum<Acc>(), rows, cols, ldy, b, Y.data(),
                     packed.data(), tf32);
    return;
  }
  Acc* const whole = static_cast<Acc*>(h.workspace(std::size_t(rows * rows) * sizeof(Acc)));
  gram(h, gemm_input<In>(), gemm_accum<Acc>(), int(rows), int(cols), Y.data(), int(ldy), whole,
       int(rows), tf32);
  // Row l of block row j ≥ 1 (whole row q = jb + l): its first jb values, to row l of packed
  // block row j.
  using Team = Kokkos::TeamPolicy<Kokkos::Cuda>::member_type;
  Kokkos::parallel_for(
      "minisgd::pack_gram", Kokkos::TeamPolicy<Kokkos::Cuda>(exec, int(rows - b), Kokkos::AUTO),
      KOKKOS_LAMBDA(const Team& team) {
        const std::int64_t q = b + team.league_rank(), j = q / b, width = j * b;
        const std::int64_t to = gram_row_offset(j, b) + (q % b) * width;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, width),
                             [&](const std::int64_t c) { packed(to + c) = whole[q * rows + c]; });
      });
}

}  // namespace minisgd::gpu
