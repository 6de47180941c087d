#pragma once
// The loops of compress/host/codec_kernels.hpp, written once on the tier Isa and compiled in
// each tier's translation unit (compress/host/tier_*.cpp) after core/simd/target_begin.hpp.
// They are the host form's loops as they were in the compressors' sources, value for value:
// the codecs they call (compress/dithering.hpp, compress/magnitude.hpp) keep the build's
// target and are inlined (flatten) so that they run in the tier's instructions.
#include "minisgd/compress/host/tier_prelude.hpp"

#if defined(__GNUC__) || defined(__clang__)
#define MINISGD_CODEC_LOOP __attribute__((flatten))
#else
#define MINISGD_CODEC_LOOP
#endif

namespace minisgd::compress::codec {

/// whole(b, r) for each block of kHostDitherBlock values from b in [i0, i1) with their random
/// bits r, part(b, r, m) for a last block of m < kHostDitherBlock values.
template <class Isa, class Whole, class Part>
inline void dither_range(const DitherStream& s, std::int64_t i0, std::int64_t i1,
                         const Whole& whole, const Part& part) {
  constexpr int B = kHostDitherBlock;
  for (std::int64_t b = i0; b < i1; b += B) {
    std::uint32_t r[B];
    random_bits<B>(s.key, s.step, s.first + std::uint64_t(b), r);
    if (i1 - b >= B)
      whole(b, r);
    else
      part(b, r, int(i1 - b));
  }
}

template <class Isa, class T, class Code>
MINISGD_CODEC_LOOP void levels_loop(const T* x, double factor, int levels, DitherStream s,
                                    std::int64_t i0, std::int64_t i1, Code* codes) {
  dither_range<Isa>(
      s, i0, i1,
      [=](std::int64_t b, const std::uint32_t* r) {
        levels_of_block<kHostDitherBlock>(x + b, factor, levels, r, codes + b);
      },
      [=](std::int64_t b, const std::uint32_t* r, int m) {
        for (int j = 0; j < m; ++j)
          codes[b + j] = Code(stochastic_level(double(x[b + j]) * factor, levels, r[j]));
      });
}

template <class Isa, bool kOver, class T>
MINISGD_CODEC_LOOP void exp_loop(const T* x, double a, DitherStream s, std::int64_t i0,
                                 std::int64_t i1, std::uint8_t* codes) {
  const auto each = [=](std::int64_t b, const std::uint32_t* r, int m) {
    for (int j = 0; j < m; ++j)
      codes[b + j] = exp_dither::encode(kOver ? double(x[b + j]) / a : double(x[b + j]) * a, r[j]);
  };
  dither_range<Isa>(
      s, i0, i1, [=](std::int64_t b, const std::uint32_t* r) { each(b, r, kHostDitherBlock); },
      each);
}

/// What a code stands for before its rank's unit: exponential dithering's ±2^−k, or the level.
template <class Isa, bool kExponential, class Code>
inline double code_value(Code c) {
  if constexpr (kExponential)
    return double(exp_dither::decode(c));
  else
    return double(c);
}

template <class Isa, bool kExponential, class Code, class T>
MINISGD_CODEC_LOOP void sum_loop(const Code* codes, const double* scales, int ranks, std::int64_t d,
                                 double levels, std::int64_t i0, std::int64_t i1, T* out) {
  // Rank by rank over a chunk of values, each value's sum in rank order.
  constexpr std::int64_t kChunk = 512;
  for (std::int64_t c0 = i0; c0 < i1; c0 += kChunk) {
    const std::int64_t n = std::min(kChunk, i1 - c0);
    double sum[kChunk];
    for (std::int64_t i = 0; i < n; ++i) sum[i] = 0;
    for (int p = 0; p < ranks; ++p) {
      const double unit = kExponential ? 2 * scales[p] : scales[p] / levels;
      const Code* const rank_codes = codes + std::int64_t(p) * d + c0;
      for (std::int64_t i = 0; i < n; ++i)
        sum[i] += code_value<Isa, kExponential>(rank_codes[i]) * unit;
    }
    for (std::int64_t i = 0; i < n; ++i) out[c0 + i] = T(sum[i]);
  }
}

template <class Isa, bool kExponential, class Code, class T>
MINISGD_CODEC_LOOP void decode_loop(const Code* codes, double unit, std::int64_t i0,
                                    std::int64_t i1, T* out) {
  for (std::int64_t i = i0; i < i1; ++i) out[i] = T(code_value<Isa, kExponential>(codes[i]) * unit);
}

template <class Isa, class T>
MINISGD_CODEC_LOOP typename CodecKernels<T>::Bits max_bits_loop(const T* x, std::int64_t i0,
                                                                std::int64_t i1) {
  return max_magnitude_bits_of(x + i0, std::size_t(i1 - i0));
}

template <class Isa, class F, class T>
MINISGD_CODEC_LOOP void cast_loop(const T* x, std::int64_t i0, std::int64_t i1,
                                  std::uint16_t* codes) {
  for (std::int64_t i = i0; i < i1; ++i) codes[i] = precision::from_float<F>(float(x[i])).bits;
}

template <class Isa, class F>
MINISGD_CODEC_LOOP void cast_merge_loop(std::uint16_t* a, const std::uint16_t* b, std::int64_t i0,
                                        std::int64_t i1) {
  for (std::int64_t i = i0; i < i1; ++i)
    a[i] =
        precision::from_float<F>(precision::to_float(F{a[i]}) + precision::to_float(F{b[i]})).bits;
}

template <class Isa, class F, class T>
MINISGD_CODEC_LOOP void widen_loop(const std::uint16_t* codes, std::int64_t i0, std::int64_t i1,
                                   T* out) {
  for (std::int64_t i = i0; i < i1; ++i) out[i] = T(precision::to_float(F{codes[i]}));
}

template <class Isa>
MINISGD_CODEC_LOOP void exp_merge_loop(std::uint8_t* own, const std::uint8_t* received,
                                       DitherStream s, std::int64_t i0, std::int64_t i1) {
  // Value i draws the bits of 2i and 2i + 1: a block's in one vectorized loop.
  constexpr int B = kHostDitherBlock;
  for (std::int64_t b = i0; b < i1; b += B) {
    std::uint32_t r[2 * B];
    random_bits<2 * B>(s.key, s.step, 2 * (s.first + std::uint64_t(b)), r);
    for (std::int64_t j = 0, i = b; j < B && i < i1; ++j, ++i)
      own[i] = exp_dither::merge(own[i], received[i], r[2 * j], r[2 * j + 1]);
  }
}

template <class Isa, class T>
const CodecKernels<T>& tier_codec_kernels() {
  static constexpr CodecKernels<T> kernels{&levels_loop<Isa, T, std::int8_t>,
                                           &levels_loop<Isa, T, std::int16_t>,
                                           &levels_loop<Isa, T, std::int32_t>,
                                           &exp_loop<Isa, false, T>,
                                           &exp_loop<Isa, true, T>,
                                           &sum_loop<Isa, true, std::uint8_t, T>,
                                           &sum_loop<Isa, false, std::int8_t, T>,
                                           &sum_loop<Isa, false, std::int16_t, T>,
                                           &decode_loop<Isa, false, std::int8_t, T>,
                                           &decode_loop<Isa, false, std::int16_t, T>,
                                           &decode_loop<Isa, false, std::int32_t, T>,
                                           &decode_loop<Isa, true, std::uint8_t, T>,
                                           &max_bits_loop<Isa, T>,
                                           &cast_loop<Isa, precision::bf16, T>,
                                           &cast_loop<Isa, precision::fp16, T>,
                                           &cast_merge_loop<Isa, precision::bf16>,
                                           &cast_merge_loop<Isa, precision::fp16>,
                                           &widen_loop<Isa, precision::bf16, T>,
                                           &widen_loop<Isa, precision::fp16, T>};
  return kernels;
}

template <class Isa>
ExpMergeKernel tier_exp_merge_kernel() {
  return &exp_merge_loop<Isa>;
}

/// Every table of tier Isa (in its translation unit).
#define MINISGD_CODEC_TIER_TABLES(Isa)                                    \
  template const CodecKernels<float>& tier_codec_kernels<Isa, float>();   \
  template const CodecKernels<double>& tier_codec_kernels<Isa, double>(); \
  template ExpMergeKernel tier_exp_merge_kernel<Isa>();

}  // namespace minisgd::compress::codec
