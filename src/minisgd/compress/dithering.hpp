#pragma once
// Unbiased quantizers shared by QSGD and Global-QSGD, as device functions.
//
// Standard dithering: y ∈ ℝ → ⌊y⌋ or ⌊y⌋+1, up with probability y − ⌊y⌋.
// Exponential dithering of |y| ≤ ½: write |y| = m·2^e with m ∈ [½, 1); keep 2^e with
// probability 2m − 1, else 2^(e−1) (expectation m·2^e). A code is one byte: bit 7 the sign,
// bits 0..6 k = −e ∈ [0, 126] for the value ±2^(−k); 0x7F is zero and 0xFF is NaN (what a
// NaN, an infinity or a value outside the range encodes to, so it is never laundered into a
// finite code; a merge with NaN is NaN). Below 2^−126 a value becomes 2^−126 or 0, again
// without bias. Probabilities come from 32 random bits, so every choice is unbiased to within
// 2^−32 of the step it rounds across.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "minisgd/compress/form.hpp"
#include "minisgd/compress/host/codec_run.hpp"
#include "minisgd/core/kokkos.hpp"
#include "minisgd/precision/bit_rounding.hpp"
#include "minisgd/precision/bits.hpp"

namespace minisgd::compress {

/// ⌊y⌋ or ⌊y⌋ + 1, up iff random < (y − ⌊y⌋)·2^32.
KOKKOS_INLINE_FUNCTION double stochastic_round(double y, std::uint32_t random) {
  using std::floor;
  const double lo = floor(y);
  return lo + double(double(random) < (y - lo) * 4294967296.0);
}

/// The integer level of y, |y| ≤ levels: SR(y) clamped to [−levels, levels], because y can
/// exceed `levels` by an ulp of rounding (g·fl(L/M) at g = ±M) and must never round to
/// levels + 1 (the sum of P codes would overflow its type). A NaN y gives 0: levels carry no
/// NaN, so callers propagate non-finite input through the scale instead.
KOKKOS_INLINE_FUNCTION std::int32_t stochastic_level(double y, int levels, std::uint32_t random) {
  if (!(y == y)) return 0;
  const double q = stochastic_round(y, random);
  return std::int32_t(q < -levels ? -levels : (q > levels ? levels : q));
}

/// Integer codes of 1, 2 or 4 bytes in a byte buffer (encode_levels writes them).
KOKKOS_INLINE_FUNCTION std::int32_t load_level(const std::uint8_t* codes, int bytes,
                                               std::size_t i) {
  if (bytes == 1) return reinterpret_cast<const std::int8_t*>(codes)[i];
  if (bytes == 2) return reinterpret_cast<const std::int16_t*>(codes)[i];
  return reinterpret_cast<const std::int32_t*>(codes)[i];
}

/// r[j] = sr_bits(key, step, first + j) for j < N, N at once (each element's bits are a Philox
/// evaluation, tens of multiplies, the bulk of a dithering kernel: sixteen lanes at a time with
/// AVX-512).
template <int N>
KOKKOS_INLINE_FUNCTION void random_bits(std::uint64_t key, std::uint64_t step, std::uint64_t first,
                                        std::uint32_t* r) {
  precision::sr_bits_run<N>(key, step, first, r);
}

/// Elements a work item of the host form dithers (form.hpp): their random bits come from one
/// vectorized loop. The device form dithers one element a work item (a thread each on a device).
constexpr int kHostDitherBlock = 16;
/// The host form's block in this build (1 where kernels run on a device: no host form there).
constexpr int kDitherBlock = kHostMemory ? kHostDitherBlock : 1;

/// dither_each in blocks of B elements.
template <int B, class F, class W>
void dither_blocks(const char* name, std::int64_t n, std::uint64_t key, std::uint64_t step,
                   std::uint64_t first, const F& f, const W& whole) {
  Kokkos::parallel_for(
      name, Kokkos::RangePolicy<ExecSpace>(0, (n + B - 1) / B),
      KOKKOS_LAMBDA(const std::int64_t b) {
        const std::int64_t i0 = b * B;
        std::uint32_t r[B];
        random_bits<B>(key, step, first + std::uint64_t(i0), r);
        if (n - i0 >= B) {
          whole(i0, r);
        } else {
          for (int j = 0; j < int(n - i0); ++j) f(i0 + j, r[j]);
        }
      });
}

/// The whole block of N elements as f element by element.
template <class F, int N = kDitherBlock>
struct EachOfBlock {
  F f;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i0, const std::uint32_t* r) const {
    for (int j = 0; j < N; ++j) f(i0 + j, r[j]);
  }
};

/// f(i, r) for i < n in kernel `name`, r the random bits of element first + i at (key, step):
/// the same bits and results however the elements are grouped. In the host form a whole block
/// of kDitherBlock elements from i0 is whole(i0, r) instead, which must give what f would,
/// element by element; the device form calls f for each element.
template <class F, class W>
void dither_each(const char* name, Form form, std::int64_t n, std::uint64_t key, std::uint64_t step,
                 std::uint64_t first, const F& f, const W& whole) {
  if (form == Form::host)
    dither_blocks<kDitherBlock>(name, n, key, step, first, f, whole);
  else
    dither_blocks<1>(name, n, key, step, first, f, EachOfBlock<F, 1>{f});
}

/// dither_each with f for whole blocks too.
template <class F>
void dither_each(const char* name, Form form, std::int64_t n, std::uint64_t key, std::uint64_t step,
                 std::uint64_t first, const F& f) {
  dither_each(name, form, n, key, step, first, f, EachOfBlock<F>{f});
}

/// out[j] = Code(stochastic_level(double(x[j])·factor, levels, r[j])) for j < N: for N = 16
/// where the build targets AVX-512F, simd::stochastic_levels16, the same codes.
template <int N, class T, class Code>
KOKKOS_INLINE_FUNCTION void levels_of_block(const T* x, double factor, int levels,
                                            const std::uint32_t* r, Code* out) {
#ifdef MINISGD_FIXED_AVX512  // (host code for AVX-512F, as the Philox lanes)
  if constexpr (N == 16 && (std::is_same_v<T, float> || std::is_same_v<T, double>)) {
    simd::stochastic_levels16(x, factor, levels, r, out);
    return;
  }
#endif
  for (int j = 0; j < N; ++j) out[j] = Code(stochastic_level(double(x[j]) * factor, levels, r[j]));
}

/// encode_levels with codes of type Code (a named function: CUDA allows no device lambda inside
/// another lambda).
template <class Code, class T>
void encode_levels_as(Form form, const Vector<T>& local, double factor, int levels,
                      std::uint64_t key, std::uint64_t step, std::uint64_t first, Code* codes) {
  const T* const values = local.data();  // a pointer, not the view: stores of 1-byte codes
                                         // may alias anything, the view's own fields included
  dither_each(
      "minisgd::encode_levels", form, local.extent(0), key, step, first,
      KOKKOS_LAMBDA(const std::int64_t i, const std::uint32_t random) {
        codes[i] = Code(stochastic_level(double(values[i]) * factor, levels, random));
      },
      KOKKOS_LAMBDA(const std::int64_t i0, const std::uint32_t* r) {
        levels_of_block<kDitherBlock>(values + i0, factor, levels, r, codes + i0);
      });
}

/// codes[i] = SR(local(i)·factor) within ±levels, with the random bits of element first + i
/// at (key, step), as integers of `bytes` bytes (the type chosen once, not per element).
template <class T>
void encode_levels(Form form, const Vector<T>& local, double factor, int levels, std::uint64_t key,
                   std::uint64_t step, std::uint64_t first, int bytes, std::uint8_t* codes) {
  if constexpr (kHostMemory) {
    if (form == Form::host) {  // the active tier's loop (compress/host/codec_kernels.hpp)
      const codec::CodecKernels<T>* const k = &codec::active_codec<T>();
      const T* const x = local.data();
      const codec::DitherStream s{key, step, first};
      codec::for_chunks(
          "minisgd::encode_levels", std::int64_t(local.extent(0)),
          [=](std::int64_t i0, std::int64_t i1) {
            if (bytes == 1)
              k->levels_i8(x, factor, levels, s, i0, i1, reinterpret_cast<std::int8_t*>(codes));
            else if (bytes == 2)
              k->levels_i16(x, factor, levels, s, i0, i1, reinterpret_cast<std::int16_t*>(codes));
            else
              k->levels_i32(x, factor, levels, s, i0, i1, reinterpret_cast<std::int32_t*>(codes));
          });
      return;
    }
  }
  if (bytes == 1)
    encode_levels_as(form, local, factor, levels, key, step, first,
                     reinterpret_cast<std::int8_t*>(codes));
  else if (bytes == 2)
    encode_levels_as(form, local, factor, levels, key, step, first,
                     reinterpret_cast<std::int16_t*>(codes));
  else
    encode_levels_as(form, local, factor, levels, key, step, first,
                     reinterpret_cast<std::int32_t*>(codes));
}

namespace exp_dither {

constexpr std::uint8_t zero = 0x7F;
constexpr std::uint8_t nan = 0xFF;
constexpr int kmax = 126;

KOKKOS_INLINE_FUNCTION bool is_zero(std::uint8_t c) { return c == zero; }
KOKKOS_INLINE_FUNCTION bool is_nan(std::uint8_t c) { return c == nan; }
KOKKOS_INLINE_FUNCTION int magnitude(std::uint8_t c) { return c & 0x7F; }
KOKKOS_INLINE_FUNCTION bool negative(std::uint8_t c) { return (c >> 7) != 0; }
KOKKOS_INLINE_FUNCTION std::uint8_t code(bool negative, int k) {
  return std::uint8_t((negative ? 0x80 : 0) | k);
}

KOKKOS_INLINE_FUNCTION float decode(std::uint8_t c) {
  if (is_zero(c)) return 0.0f;
  if (is_nan(c)) return precision::float_from_bits(0x7FC00000u);
  const float v = precision::pow2(-magnitude(c));
  return negative(c) ? -v : v;
}

/// True with probability 2^−n (n ≥ 0), to within 2^−32.
KOKKOS_INLINE_FUNCTION bool with_probability_pow2(int n, std::uint32_t random) {
  return n == 0 || (n < 32 && random < (std::uint32_t(1) << (32 - n)));
}

/// Code of y, |y| ≤ ½, rounded between neighbouring powers of two without bias; NaN, ±∞ and
/// |y| ≥ 1 (outside the contract) give the NaN code.
KOKKOS_INLINE_FUNCTION std::uint8_t encode(double y, std::uint32_t random) {
  if (y == 0.0) return zero;
  if (!(y > -1.0 && y < 1.0)) return nan;
  const bool neg = y < 0;
  const std::uint64_t bits = precision::to_bits(neg ? -y : y);
  const int e2 = int((bits >> 52) & 0x7FF) - 1023;  // |y| = 1.f·2^e2, so m = 1.f/2, e = e2+1
  if (e2 < -kmax) {  // below the smallest power: 2^−126 with probability |y|·2^126
    const double p = (neg ? -y : y) * 8.507059173023462e37;  // 2^126
    return double(random) < p * 4294967296.0 ? code(neg, kmax) : zero;
  }
  // Keep 2^(e2+1) (k = −e2−1) with probability 2m − 1 = f, else 2^e2 (k = −e2).
  const std::uint32_t f32 = std::uint32_t((bits & 0xFFFFFFFFFFFFFull) >> 20);
  return code(neg, random < f32 ? -e2 - 1 : -e2);
}

/// Unbiased sum of two codes in the compressed domain (`random2` is used only when the
/// result falls below 2^−126). Operands in any order give the same result.
KOKKOS_INLINE_FUNCTION std::uint8_t merge(std::uint8_t a, std::uint8_t b, std::uint32_t random,
                                          std::uint32_t random2) {
  if (is_nan(a) || is_nan(b)) return nan;
  if (is_zero(a)) return b;
  if (is_zero(b)) return a;
  const int ka = magnitude(a), kb = magnitude(b);
  const int kmin = ka < kb ? ka : kb, diff = ka < kb ? kb - ka : ka - kb;
  const bool na = negative(a), nb = negative(b);
  if (na == nb)  // 2^−kmin(1 + 2^−diff): 2^−(kmin−1) with probability 2^−diff
    return code(na, with_probability_pow2(diff, random) ? kmin - 1 : kmin);
  if (diff == 0) return zero;
  // 2^−kmin(1 − 2^−diff), sign of the larger: 2^−(kmin+1) with probability 2^−(diff−1).
  const bool sign = ka < kb ? na : nb;
  const int k = with_probability_pow2(diff - 1, random) ? kmin + 1 : kmin;
  if (k <= kmax) return code(sign, k);
  return (random2 >> 31) ? code(sign, kmax) : zero;  // 2^−127: 2^−126 or 0, half each
}

}  // namespace exp_dither

/// codes[i] = exp_dither::encode(local(i)·a), or of local(i) ÷ a where kOver (a division, not
/// a reciprocal's product: the bits differ), with the random bits of element first + i at
/// (key, step).
template <bool kOver, class T>
void encode_exponential(const char* name, Form form, const Vector<T>& local, double a,
                        std::uint64_t key, std::uint64_t step, std::uint64_t first,
                        std::uint8_t* codes) {
  if constexpr (kHostMemory) {
    if (form == Form::host) {  // the active tier's loop (compress/host/codec_kernels.hpp)
      const codec::CodecKernels<T>* const k = &codec::active_codec<T>();
      const T* const x = local.data();
      const codec::DitherStream s{key, step, first};
      codec::for_chunks(name, std::int64_t(local.extent(0)), [=](std::int64_t i0, std::int64_t i1) {
        (kOver ? k->exp_over : k->exp_times)(x, a, s, i0, i1, codes);
      });
      return;
    }
  }
  const T* const values = local.data();
  dither_each(
      name, form, local.extent(0), key, step, first,
      KOKKOS_LAMBDA(const std::int64_t i, const std::uint32_t random) {
        codes[i] =
            exp_dither::encode(kOver ? double(values[i]) / a : double(values[i]) * a, random);
      });
}

}  // namespace minisgd::compress
