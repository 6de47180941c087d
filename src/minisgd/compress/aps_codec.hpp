#pragma once
// The arithmetic of auto precision scaling, as device functions and host helpers.
//
// Block l of the gradient gets the exponent e_l = ⌈log2(P·max|g_l|)⌉ (max over ranks), so the
// sum over P ranks of values scaled by 2^shift_l, shift_l = bias − e_l − h, stays within
// 2^(bias−h). The values travel as (1+E+M)-bit codes of an IEEE-style format and every partial
// sum is rounded back to it. h ("headroom") is the fewest extra bits that keep the largest
// partial sum the merge tree can build finite: rounding is monotone, so the worst case is
// every leaf at its bound, and doubling is exact, so that bound times 2^⌈log2 P⌉ must not
// exceed the format's maximum. For power-of-two P, h = 0.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "minisgd/comm/merge_plan.hpp"
#include "minisgd/core/kokkos.hpp"
#include "minisgd/precision/custom_format.hpp"
#include "minisgd/precision/format_spec.hpp"

namespace minisgd::compress::aps {

/// Exponent of a block that is zero on every rank (smaller than any real exponent).
constexpr std::int16_t zero_block = INT16_MIN;

/// 2^k as a double, −1022 ≤ k ≤ 1023.
KOKKOS_INLINE_FUNCTION double pow2d(int k) {
  return precision::double_from_bits(std::uint64_t(k + 1023) << 52);
}

/// ⌈log2 x⌉ for a normal double x > 0.
KOKKOS_INLINE_FUNCTION int ceil_exponent(double x) {
  const std::uint64_t b = precision::to_bits(x);
  return int((b >> 52) & 0x7FF) - 1023 + int((b & 0xFFFFFFFFFFFFFull) != 0);
}

/// e_l for a block whose largest |value| (as a float) is `block_max`.
KOKKOS_INLINE_FUNCTION std::int16_t block_exponent(float block_max, int ranks) {
  return block_max > 0 ? std::int16_t(ceil_exponent(double(block_max) * ranks)) : zero_block;
}

/// shift = bias − h − e of a block with exponent e (not zero_block).
KOKKOS_INLINE_FUNCTION int block_shift(precision::CustomFormat f, int headroom, int e) {
  return f.bias() - headroom - e;
}

/// Gradient value g (as a float) scaled by 2^shift: exact until rounded to the float.
KOKKOS_INLINE_FUNCTION float scaled(float g, int shift) { return float(double(g) * pow2d(shift)); }

/// The code of gradient value g (as a float) scaled by 2^shift.
KOKKOS_INLINE_FUNCTION std::uint32_t encode_scaled(float g, int shift, precision::CustomFormat f) {
  return precision::encode(scaled(g, shift), f);
}

/// The format's codes as the merge and the sum read and write them: decode, and encode to nearest
/// (precision/custom_format.hpp). The host path has its own Codec, the same values by a table.
struct FormatCodec {
  precision::CustomFormat f;
  KOKKOS_INLINE_FUNCTION float decode(std::uint32_t code) const {
    return precision::decode(code, f);
  }
  KOKKOS_INLINE_FUNCTION std::uint32_t encode(float x) const { return precision::encode(x, f); }
};

/// A summed value back in gradient units: an exact power-of-two unscale.
KOKKOS_INLINE_FUNCTION double unscale(float v, int shift) { return double(v) * pow2d(-shift); }

using precision::wire_format;  // precision/format_spec.hpp

/// The headroom h for P ranks (see the file comment).
inline int headroom_bits(precision::CustomFormat f, int ranks) {
  const double growth = pow2d(comm::ceil_log2(ranks));
  for (int h = 0;; ++h) {
    // The largest leaf: 2^(bias−h)/P rounded up to a float, then to the format.
    const double bound = pow2d(f.bias() - h) / ranks;
    float leaf = float(bound);
    if (double(leaf) < bound) leaf = std::nextafter(leaf, INFINITY);
    if (double(precision::round_to(leaf, f)) * growth <= double(f.max_value())) return h;
  }
}

/// How codes sit in the payload: elements of `lanes` words (sum, and compensation when
/// Kahan-compensated), each word holding `per_word` codes of `bits` bits, little-endian.
struct Packing {
  int bits;
  int word_bytes;
  int per_word;
  int lanes;

  static Packing of(precision::CustomFormat f, bool kahan) {
    const int bits = f.bits();
    return {bits, bits <= 8 ? 1 : 2, bits <= 4 ? 2 : 1, kahan ? 2 : 1};
  }
  KOKKOS_INLINE_FUNCTION std::size_t element_bytes() const {
    return std::size_t(word_bytes) * lanes;
  }
  std::size_t elements(std::size_t values) const { return (values + per_word - 1) / per_word; }

  KOKKOS_INLINE_FUNCTION std::uint32_t get(const std::uint8_t* element, int lane, int j) const {
    const std::uint8_t* w = element + lane * word_bytes;
    const std::uint32_t word =
        word_bytes == 1 ? w[0] : std::uint32_t(w[0]) | std::uint32_t(w[1]) << 8;
    return (word >> (j * bits)) & ((1u << bits) - 1);
  }
  /// Writes every code of one lane at once.
  KOKKOS_INLINE_FUNCTION void put(std::uint8_t* element, int lane,
                                  const std::uint32_t* codes) const {
    std::uint32_t word = 0;
    for (int j = 0; j < per_word; ++j) word |= codes[j] << (j * bits);
    std::uint8_t* w = element + lane * word_bytes;
    w[0] = std::uint8_t(word);
    if (word_bytes == 2) w[1] = std::uint8_t(word >> 8);
  }
};

/// f(shape) with the shape of p (word bytes, codes per word, lanes) as a compile-time
/// std::integral_constant, word_bytes·100 + per_word·10 + lanes; `shaped<kShape>(bits)` makes
/// the Packing, whose constant fields let host loops over elements vectorize.
template <int kShape>
constexpr Packing shaped(int bits) {
  return {bits, kShape / 100, kShape / 10 % 10, kShape % 10};
}
template <class F>
void with_shape(const Packing& p, const F& f) {
  switch (p.word_bytes * 100 + p.per_word * 10 + p.lanes) {
    case 121: return f(std::integral_constant<int, 121>{});
    case 122: return f(std::integral_constant<int, 122>{});
    case 111: return f(std::integral_constant<int, 111>{});
    case 112: return f(std::integral_constant<int, 112>{});
    case 211: return f(std::integral_constant<int, 211>{});
    case 212: return f(std::integral_constant<int, 212>{});
    default: throw std::logic_error("aps: no packing of this shape");
  }
}

/// One merge of a sum lane (and its compensation lane): s = RN(a + b); with compensation,
/// c = RN(c_a + c_b + (a + b − s)) carries what the rounding of s dropped.
template <class Codec>
KOKKOS_INLINE_FUNCTION void merge_element(const Packing& p, const Codec& codec, std::uint8_t* own,
                                          const std::uint8_t* other) {
  std::uint32_t s[2], c[2];
  for (int j = 0; j < p.per_word; ++j) {
    const float t = codec.decode(p.get(own, 0, j)) + codec.decode(p.get(other, 0, j));
    s[j] = codec.encode(t);
    if (p.lanes == 2) {
      const float err = t - codec.decode(s[j]);
      c[j] = codec.encode(codec.decode(p.get(own, 1, j)) + codec.decode(p.get(other, 1, j)) + err);
    }
  }
  p.put(own, 0, s);
  if (p.lanes == 2) p.put(own, 1, c);
}
KOKKOS_INLINE_FUNCTION void merge_element(const Packing& p, precision::CustomFormat f,
                                          std::uint8_t* own, const std::uint8_t* other) {
  merge_element(p, FormatCodec{f}, own, other);
}

/// The value lane j of an element stands for, in scaled units.
template <class Codec>
KOKKOS_INLINE_FUNCTION float element_value(const Packing& p, const Codec& codec,
                                           const std::uint8_t* element, int j) {
  const float s = codec.decode(p.get(element, 0, j));
  return p.lanes == 2 ? s + codec.decode(p.get(element, 1, j)) : s;
}
KOKKOS_INLINE_FUNCTION float element_value(const Packing& p, precision::CustomFormat f,
                                           const std::uint8_t* element, int j) {
  return element_value(p, FormatCodec{f}, element, j);
}

}  // namespace minisgd::compress::aps
