#pragma once
// The host form's per-value loops of the quantizing compressors (compress/form.hpp) as tables of
// function pointers, one per vector tier (core/simd/tier.hpp), as kernels/host/host_kernels.hpp
// holds the row loops: written once (compress/host/codec_loops.hpp), compiled once per tier
// (compress/host/tier_*.cpp, with the row loops' flags), the table of simd::active_tier()
// looked up once per call. They sit in compress/, not kernels/host/, because they are made of
// compress/'s codecs (ci/check_layers.sh: kernels/ may not include compress/). Every tier makes
// the same operations in the same order on each value, with the same random bits, so the codes
// and sums are the same bits whichever tier runs (tests/compress/test_compressors.cpp).
//
// Each loop covers the values [i0, i1) of a vector; a dithering loop's i0 is a multiple of
// kHostDitherBlock (compress/dithering.hpp), whose blocks draw their bits together.
#include <cstdint>
#include <type_traits>

#include "minisgd/compress/aps_codec.hpp"
#include "minisgd/compress/loco_codec.hpp"
#include "minisgd/core/simd/tier.hpp"

namespace minisgd::compress::codec {

/// What APS's host loops read of a call: the format and its code values (every code's, a table),
/// the packing, and the blocks with their exponents.
struct ApsCall {
  precision::CustomFormat f;
  const float* values;
  aps::Packing packing;
  int headroom;
  std::size_t d, block;
  const std::int16_t* exps;
};

/// The random bits of value i are those of element first + i at (key, step).
struct DitherStream {
  std::uint64_t key, step, first;
};

/// The loops for values of type T (float or double).
template <class T>
struct CodecKernels {
  using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  /// codes[i] = Code(stochastic_level(double(x[i])·factor, levels, bits of i)) (encode_levels).
  void (*levels_i8)(const T* x, double factor, int levels, DitherStream s, std::int64_t i0,
                    std::int64_t i1, std::int8_t* codes);
  void (*levels_i16)(const T* x, double factor, int levels, DitherStream s, std::int64_t i0,
                     std::int64_t i1, std::int16_t* codes);
  void (*levels_i32)(const T* x, double factor, int levels, DitherStream s, std::int64_t i0,
                     std::int64_t i1, std::int32_t* codes);
  /// codes[i] = exp_dither::encode(double(x[i])·a, bits of i) (QSGD), or ÷ a (Global-QSGD).
  void (*exp_times)(const T* x, double a, DitherStream s, std::int64_t i0, std::int64_t i1,
                    std::uint8_t* codes);
  void (*exp_over)(const T* x, double a, DitherStream s, std::int64_t i0, std::int64_t i1,
                   std::uint8_t* codes);
  /// QSGD's decode: out[i] = T(Σ_p value(rank p's code i)·unit_p) in rank order, the codes rank
  /// after rank d apart, unit_p = 2·scales[p] (exponential) or scales[p] / levels.
  void (*sum_exp)(const std::uint8_t* codes, const double* scales, int ranks, std::int64_t d,
                  double levels, std::int64_t i0, std::int64_t i1, T* out);
  void (*sum_i8)(const std::int8_t* codes, const double* scales, int ranks, std::int64_t d,
                 double levels, std::int64_t i0, std::int64_t i1, T* out);
  void (*sum_i16)(const std::int16_t* codes, const double* scales, int ranks, std::int64_t d,
                  double levels, std::int64_t i0, std::int64_t i1, T* out);
  /// Global-QSGD's decode: out[i] = T(double(codes[i])·unit), or of exp_dither::decode.
  void (*decode_i8)(const std::int8_t* codes, double unit, std::int64_t i0, std::int64_t i1,
                    T* out);
  void (*decode_i16)(const std::int16_t* codes, double unit, std::int64_t i0, std::int64_t i1,
                     T* out);
  void (*decode_i32)(const std::int32_t* codes, double unit, std::int64_t i0, std::int64_t i1,
                     T* out);
  void (*decode_exp)(const std::uint8_t* codes, double unit, std::int64_t i0, std::int64_t i1,
                     T* out);
  /// The bits of the largest |x[i]| of [i0, i1), NaN as +∞ (compress/magnitude.hpp).
  Bits (*max_bits)(const T* x, std::int64_t i0, std::int64_t i1);
  /// Cast's codes: codes[i] = from_float<F>(float(x[i])).bits, F bf16 or fp16.
  void (*cast_bf16)(const T* x, std::int64_t i0, std::int64_t i1, std::uint16_t* codes);
  void (*cast_fp16)(const T* x, std::int64_t i0, std::int64_t i1, std::uint16_t* codes);
  /// Cast's merge: a[i] = from_float<F>(to_float(a[i]) + to_float(b[i])).
  void (*merge_bf16)(std::uint16_t* a, const std::uint16_t* b, std::int64_t i0, std::int64_t i1);
  void (*merge_fp16)(std::uint16_t* a, const std::uint16_t* b, std::int64_t i0, std::int64_t i1);
  /// Cast's decode: out[i] = T(to_float(F{codes[i]})).
  void (*widen_bf16)(const std::uint16_t* codes, std::int64_t i0, std::int64_t i1, T* out);
  void (*widen_fp16)(const std::uint16_t* codes, std::int64_t i0, std::int64_t i1, T* out);
  /// APS (compress/aps.cpp), blocks [l0, l1): each block's exponent from its largest |value|;
  /// the values' codes at their block's scale (into `codes` first where two share a word); the
  /// summed payload unscaled. Elements [e0, e1): the codes packed two to a word; a merge.
  void (*aps_exponents)(const T* g, std::size_t d, std::size_t block, int ranks, std::int16_t* exps,
                        std::int64_t l0, std::int64_t l1);
  void (*aps_encode)(const ApsCall& a, const T* g, std::uint8_t* payload, std::uint32_t* codes,
                     std::int64_t l0, std::int64_t l1);
  void (*aps_decode)(const ApsCall& a, const std::uint8_t* payload, T* sum, std::int64_t l0,
                     std::int64_t l1);
  void (*aps_pack)(const ApsCall& a, const std::uint32_t* codes, std::uint8_t* payload,
                   std::int64_t e0, std::int64_t e1);
  void (*aps_merge)(const ApsCall& a, std::uint8_t* own, const std::uint8_t* received,
                    std::int64_t e0, std::int64_t e1);
  /// LoCo (compress/loco.cpp), groups k of [k0, k1) counted chunk after chunk, [1] where two
  /// codes share a byte: v += deQ(e), quantized into the payload (q: the codes before packing),
  /// e and v ← the new error; the fp32 sums of `ranks` chunks' values into sums; the decode of
  /// `count` chunks' values, the first d, into out.
  void (*loco_quantize[2])(float* v, const loco::ChunkLayout& L, float beta, std::int8_t* e_codes,
                           float* e_steps, std::uint8_t* payload, std::int8_t* q, std::int64_t k0,
                           std::int64_t k1);
  void (*loco_sum[2])(const loco::ChunkLayout& L, const std::uint8_t* chunks, int ranks,
                      float* sums, std::int64_t k0, std::int64_t k1);
  void (*loco_decode[2])(const loco::ChunkLayout& L, const std::uint8_t* chunks, std::size_t d,
                         T* out, std::int64_t k0, std::int64_t k1);
};

/// Global-QSGD's merge of exponential codes: own[i] = exp_dither::merge(own[i], received[i],
/// bits of 2(first + i) and 2(first + i) + 1) for i in [i0, i1), i0 a multiple of
/// kHostDitherBlock.
using ExpMergeKernel = void (*)(std::uint8_t* own, const std::uint8_t* received, DitherStream s,
                                std::int64_t i0, std::int64_t i1);

// The tables of tier t (compress/host/dispatch.cpp); t must be compiled in.
template <class T>
const CodecKernels<T>& codec_kernels(simd::Tier t);
ExpMergeKernel exp_merge_kernel(simd::Tier t);

// One tier's, Isa being simd::Generic, simd::Avx2 or simd::Avx512: defined in
// compress/host/codec_loops.hpp, instantiated in that tier's translation unit only.
template <class Isa, class T>
const CodecKernels<T>& tier_codec_kernels();
template <class Isa>
ExpMergeKernel tier_exp_merge_kernel();

}  // namespace minisgd::compress::codec
