#pragma once
// The loops of compress/host/codec_kernels.hpp, written once on the tier Isa and compiled in
// each tier's translation unit (compress/host/tier_*.cpp) after core/simd/target_begin.hpp.
// They are the host form's loops as they were in the compressors' sources, value for value:
// the codecs they call (compress/dithering.hpp, compress/magnitude.hpp) keep the build's
// target and are inlined (flatten) so that they run in the tier's instructions.
#include "minisgd/compress/host/tier_prelude.hpp"

#if MINISGD_SIMD_TARGET == 3  // (the AVX-512 tier's region: compiled for its instructions)
#include "minisgd/core/simd/dither_avx512.hpp"
#endif

#if defined(__GNUC__) || defined(__clang__)
#define MINISGD_CODEC_LOOP __attribute__((flatten))
#else
#define MINISGD_CODEC_LOOP
#endif

namespace minisgd::compress::codec {

/// The random bits and the levels of the dithering's blocks in tier Isa: compress/dithering.hpp's
/// (random_bits, levels_of_block), whose sixteen AVX-512 lanes only a build for AVX-512F has;
/// the AVX-512 tier has them in every build. The same bits either way.
template <class Isa>
struct DitherBlock {
  template <int N>
  static void bits(std::uint64_t key, std::uint64_t step, std::uint64_t first, std::uint32_t* r) {
    random_bits<N>(key, step, first, r);
  }
  template <class T, class Code>
  static void levels(const T* x, double factor, int levels, const std::uint32_t* r, Code* out) {
    levels_of_block<kHostDitherBlock>(x, factor, levels, r, out);
  }
};

#ifdef MINISGD_DITHER_AVX512
template <>
struct DitherBlock<simd::Avx512> {
  static_assert(kHostDitherBlock == 16);
  template <int N>
  __attribute__((always_inline)) static void bits(std::uint64_t key, std::uint64_t step,
                                                  std::uint64_t first, std::uint32_t* r) {
    static_assert(N % 16 == 0);
    for (int j = 0; j < N; j += 16) simd::philox16(key, step, first + std::uint64_t(j), r + j);
  }
  template <class T, class Code>
  __attribute__((always_inline)) static void levels(const T* x, double factor, int levels,
                                                    const std::uint32_t* r, Code* out) {
    simd::stochastic_levels16(x, factor, levels, r, out);
  }
};
#endif

/// whole(b, r) for each block of kHostDitherBlock values from b in [i0, i1) with their random
/// bits r, part(b, r, m) for a last block of m < kHostDitherBlock values.
template <class Isa, class Whole, class Part>
inline void dither_range(const DitherStream& s, std::int64_t i0, std::int64_t i1,
                         const Whole& whole, const Part& part) {
  constexpr int B = kHostDitherBlock;
  for (std::int64_t b = i0; b < i1; b += B) {
    std::uint32_t r[B];
    DitherBlock<Isa>::template bits<B>(s.key, s.step, s.first + std::uint64_t(b), r);
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
        DitherBlock<Isa>::levels(x + b, factor, levels, r, codes + b);
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

// ---- APS: its host form's loops (compress/aps.cpp), value for value --------------------------

/// The codes of the host loops: every code's value from a table, values[c] = decode(c, f)
/// (decode selects between floats, which GCC 12 does not vectorize), and the narrow rounding
/// path when the format has E ≤ 7 (chosen once per call).
template <class Isa, bool kNarrow>
struct TableCodec {
  precision::CustomFormat f;
  const float* values;
  // (host and device functions, as the aps_codec.hpp functions that call them; run on the host
  // only)
  KOKKOS_INLINE_FUNCTION float decode(std::uint32_t code) const { return values[code]; }
  KOKKOS_INLINE_FUNCTION std::uint32_t encode(float x) const {
    return precision::encode_nearest<kNarrow>(x, f);
  }
};

/// run(shape, codec): the packing's shape a compile-time constant (aps::with_shape) and the
/// format's TableCodec.
template <class Isa, class F>
inline void with_aps_loop(const ApsCall& a, const F& run) {
  aps::with_shape(a.packing, [&](auto shape) {
    if (a.f.E <= 7)
      run(shape, TableCodec<Isa, true>{a.f, a.values});
    else
      run(shape, TableCodec<Isa, false>{a.f, a.values});
  });
}

template <class Isa, class T>
MINISGD_CODEC_LOOP void aps_exponents_loop(const T* g, std::size_t d, std::size_t block, int ranks,
                                           std::int16_t* exps, std::int64_t l0, std::int64_t l1) {
  for (std::size_t l = std::size_t(l0); l < std::size_t(l1); ++l) {
    const std::size_t end = kmin((l + 1) * block, d);
    // On the bits of |v|, which order as the values do, a NaN's (above +∞) taken as 0: an
    // integer max vectorizes, a float max that ignores NaN does not.
    std::uint32_t m = 0;
    for (std::size_t i = l * block; i < end; ++i) {
      const std::uint32_t a = precision::to_bits(float(g[i])) & 0x7FFFFFFFu;
      m = kmax(m, a * std::uint32_t(a <= 0x7F800000u));
    }
    exps[l] = aps::block_exponent(precision::float_from_bits(m), ranks);
  }
}

template <class Isa, class T>
MINISGD_CODEC_LOOP void aps_encode_loop(const ApsCall& a, const T* g, std::uint8_t* payload,
                                        std::uint32_t* codes, std::int64_t l0, std::int64_t l1) {
  with_aps_loop<Isa>(a, [&](auto shape, const auto codec) {
    constexpr int kShape = decltype(shape)::value;
    constexpr std::uint32_t zeros[2] = {0, 0};
    constexpr int kPerWord = aps::shaped<kShape>(0).per_word;
    for (std::size_t l = std::size_t(l0); l < std::size_t(l1); ++l) {
      const aps::Packing p = aps::shaped<kShape>(a.packing.bits);  // (constant in the loop)
      const std::size_t first = l * a.block, end = kmin(first + a.block, a.d);
      const std::int16_t x = a.exps[l];
      const int shift = x == aps::zero_block ? 0 : aps::block_shift(a.f, a.headroom, x);
      for (std::size_t i = first; i < end; ++i) {
        const std::uint32_t code[2] = {
            x == aps::zero_block ? 0u : codec.encode(aps::scaled(float(g[i]), shift)), 0u};
        if constexpr (kPerWord == 1) {
          p.put(payload + i * p.element_bytes(), 0, code);
          if (p.lanes == 2) p.put(payload + i * p.element_bytes(), 1, zeros);
        } else {
          codes[i] = code[0];
        }
      }
    }
  });
}

template <class Isa, class T>
MINISGD_CODEC_LOOP void aps_pack_loop(const ApsCall& a, const std::uint32_t* codes,
                                      std::uint8_t* payload, std::int64_t e0, std::int64_t e1) {
  aps::with_shape(a.packing, [&](auto shape) {
    constexpr int kShape = decltype(shape)::value;
    constexpr std::uint32_t zeros[2] = {0, 0};
    if constexpr (aps::shaped<kShape>(0).per_word == 2) {
      const aps::Packing p = aps::shaped<kShape>(a.packing.bits);
      for (std::size_t e = std::size_t(e0); e < std::size_t(e1); ++e) {
        const std::uint32_t pair[2] = {codes[2 * e], 2 * e + 1 < a.d ? codes[2 * e + 1] : 0u};
        p.put(payload + e * p.element_bytes(), 0, pair);
        if (p.lanes == 2) p.put(payload + e * p.element_bytes(), 1, zeros);
      }
    }
  });
}

template <class Isa, class T>
MINISGD_CODEC_LOOP void aps_merge_loop(const ApsCall& a, std::uint8_t* own,
                                       const std::uint8_t* received, std::int64_t e0,
                                       std::int64_t e1) {
  with_aps_loop<Isa>(a, [&](auto shape, const auto codec) {
    constexpr int kShape = decltype(shape)::value;
    const aps::Packing p = aps::shaped<kShape>(a.packing.bits);
    const std::size_t bytes = p.element_bytes();
    for (std::size_t e = std::size_t(e0); e < std::size_t(e1); ++e)
      aps::merge_element(p, codec, own + e * bytes, received + e * bytes);
  });
}

template <class Isa, class T>
MINISGD_CODEC_LOOP void aps_decode_loop(const ApsCall& a, const std::uint8_t* payload, T* sum,
                                        std::int64_t l0, std::int64_t l1) {
  with_aps_loop<Isa>(a, [&](auto shape, const auto codec) {
    constexpr int kShape = decltype(shape)::value;
    for (std::size_t l = std::size_t(l0); l < std::size_t(l1); ++l) {
      const aps::Packing p = aps::shaped<kShape>(a.packing.bits);
      const std::size_t first = l * a.block, end = kmin(first + a.block, a.d);
      const std::int16_t x = a.exps[l];
      if (x == aps::zero_block) {
        for (std::size_t i = first; i < end; ++i) sum[i] = T(0);
        continue;
      }
      const int shift = aps::block_shift(a.f, a.headroom, x);
      for (std::size_t i = first; i < end; ++i) {
        const std::size_t element = i / std::size_t(p.per_word);
        const float v = aps::element_value(p, codec, payload + element * p.element_bytes(),
                                           int(i - element * std::size_t(p.per_word)));
        sum[i] = T(aps::unscale(v, shift));
      }
    }
  });
}

// ---- LoCo: its host form's loops (compress/loco.cpp), value for value -------------------------
// Plain loops over a group's values with codes per byte a compile-time constant, which the
// compiler vectorizes (the device form's team kernels take a branch per value on a CPU).

/// The layout with its codes per byte a constant (made inside each group, so that the compiler
/// sees it).
template <class Isa, int kPerByte>
inline loco::ChunkLayout loco_shaped(loco::ChunkLayout L) {
  L.per_byte = kPerByte;
  return L;
}

template <class Isa, int kPerByte>
MINISGD_CODEC_LOOP void loco_quantize_loop(float* v, const loco::ChunkLayout& layout, float beta,
                                           std::int8_t* e_codes, float* e_steps,
                                           std::uint8_t* payload, std::int8_t* q, std::int64_t k0,
                                           std::int64_t k1) {
  for (std::size_t k = std::size_t(k0); k < std::size_t(k1); ++k) {
    const loco::ChunkLayout L = loco_shaped<Isa, kPerByte>(layout);
    const int levels = 1 << (L.bits - 1), mask = (1 << L.bits) - 1;
    const std::size_t c = k / L.groups, g = k % L.groups, first = g * L.group;
    const std::size_t n = kmin(L.group, L.length - first), at = c * L.length + first;
    float* const x = v + at;
    std::int8_t* const e = e_codes + at;
    std::int8_t* const codes = q + at;
    std::uint8_t* const chunk = payload + c * L.bytes;
    const float e_step = e_steps[k];
    for (std::size_t t = 0; t < n; ++t) x[t] += float(e[t]) * e_step;
    const float step = max_magnitude_of(x, n) / float(levels);
    // Two loops: GCC 12 vectorizes neither half with the other (a float product of the
    // selected code).
    for (std::size_t t = 0; t < n; ++t) codes[t] = std::int8_t(loco::quantize(x[t], step, levels));
    for (std::size_t t = 0; t < n; ++t)
      x[t] = loco::compensate(beta, float(e[t]) * e_step, x[t], loco::dequantize(codes[t], step));
    std::uint8_t* const bytes = chunk + 4 * L.groups + first / kPerByte;
    for (std::size_t t = 0; t < n / kPerByte; ++t)
      bytes[t] = kPerByte == 2
                     ? std::uint8_t((codes[2 * t] & mask) | (codes[2 * t + 1] & mask) << 4)
                     : std::uint8_t(codes[t] & mask);
    if (kPerByte == 2 && n % 2) bytes[n / 2] = std::uint8_t(codes[n - 1] & mask);
    const float new_step = max_magnitude_of(x, n) / 127.0f;
    for (std::size_t t = 0; t < n; ++t) e[t] = loco::error_code(x[t], new_step);
    L.set_step(chunk, g, step);
    e_steps[k] = new_step;
  }
}

constexpr std::size_t kLocoSums = 256;  // values of a group summed at once, on the stack

/// out[c·length + j] for every value j < d of chunks c: chunk c's value j (kSum false: the
/// decode of the gathered chunks), or the fp32 sum from 0 of value j of chunks 0, 1, ..,
/// ranks − 1 in order (kSum: the owned chunk's sum of what every rank sent).
template <class Isa, int kPerByte, bool kSum, class Out>
MINISGD_CODEC_LOOP void loco_values_loop(const loco::ChunkLayout& layout,
                                         const std::uint8_t* chunks, int ranks, std::size_t d,
                                         Out* out, std::int64_t k0, std::int64_t k1) {
  for (std::size_t k = std::size_t(k0); k < std::size_t(k1); ++k) {
    const loco::ChunkLayout L = loco_shaped<Isa, kPerByte>(layout);
    const std::size_t c = k / L.groups, g = k % L.groups, first = g * L.group;
    const std::size_t at = c * L.length + first;
    const std::size_t n = at >= d ? 0 : kmin(kmin(L.group, L.length - first), d - at);
    float s[kLocoSums];
    for (std::size_t t0 = 0; t0 < n; t0 += kLocoSums) {
      const std::size_t m = kmin(n - t0, kLocoSums);
      for (int p = 0; p < ranks; ++p) {
        const std::uint8_t* chunk = chunks + (std::size_t(p) + c) * L.bytes;
        const float step = L.step(chunk, g);
        for (std::size_t t = 0; t < m; ++t) {
          const float x = loco::dequantize(L.code(chunk, first + t0 + t), step);
          s[t] = kSum ? (p == 0 ? 0.0f : s[t]) + x : x;
        }
      }
      for (std::size_t t = 0; t < m; ++t) out[at + t0 + t] = Out(s[t]);
    }
  }
}

template <class Isa, int kPerByte>
void loco_sum_loop(const loco::ChunkLayout& L, const std::uint8_t* chunks, int ranks, float* sums,
                   std::int64_t k0, std::int64_t k1) {
  loco_values_loop<Isa, kPerByte, true>(L, chunks, ranks, L.length, sums, k0, k1);
}

template <class Isa, int kPerByte, class T>
void loco_decode_loop(const loco::ChunkLayout& L, const std::uint8_t* chunks, std::size_t d, T* out,
                      std::int64_t k0, std::int64_t k1) {
  loco_values_loop<Isa, kPerByte, false>(L, chunks, 1, d, out, k0, k1);
}

template <class Isa>
MINISGD_CODEC_LOOP void exp_merge_loop(std::uint8_t* own, const std::uint8_t* received,
                                       DitherStream s, std::int64_t i0, std::int64_t i1) {
  // Value i draws the bits of 2i and 2i + 1: a block's in one vectorized loop.
  constexpr int B = kHostDitherBlock;
  for (std::int64_t b = i0; b < i1; b += B) {
    std::uint32_t r[2 * B];
    DitherBlock<Isa>::template bits<2 * B>(s.key, s.step, 2 * (s.first + std::uint64_t(b)), r);
    for (std::int64_t j = 0, i = b; j < B && i < i1; ++j, ++i)
      own[i] = exp_dither::merge(own[i], received[i], r[2 * j], r[2 * j + 1]);
  }
}

template <class Isa, class T>
const CodecKernels<T>& tier_codec_kernels() {
  static constexpr CodecKernels<T> kernels{
      &levels_loop<Isa, T, std::int8_t>,
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
      &widen_loop<Isa, precision::fp16, T>,
      &aps_exponents_loop<Isa, T>,
      &aps_encode_loop<Isa, T>,
      &aps_decode_loop<Isa, T>,
      &aps_pack_loop<Isa, T>,
      &aps_merge_loop<Isa, T>,
      {&loco_quantize_loop<Isa, 1>, &loco_quantize_loop<Isa, 2>},
      {&loco_sum_loop<Isa, 1>, &loco_sum_loop<Isa, 2>},
      {&loco_decode_loop<Isa, 1, T>, &loco_decode_loop<Isa, 2, T>}};
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
