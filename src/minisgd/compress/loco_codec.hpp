#pragma once
// The arithmetic of low-bit communication with error compensation, as device functions.
//
// A group of values v with largest magnitude vmax is sent as one fp32 step = vmax/L and
// codes q = clamp(rint(v/step), −L, L−1), L = 2^(bits−1), so deQ(q) = q·step. The compensation
// error e_new = β·e + (1−β)·(v − deQ(q)) is stored as int8 codes with an fp32 step per group
// (max|e_new|/127). With β = 0, e_new = v − deQ(q) exactly (deQ(q) is within a factor 2 of v
// or zero, so the subtraction is exact), hence v = deQ(q) + e_new bit for bit.
#include <cmath>
#include <cstdint>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/precision/bits.hpp"

namespace minisgd::compress::loco {

/// A NaN or ∞ in a group makes its step +∞ (compress/magnitude.hpp) and every code 0, so the
/// group decodes to 0·∞ = NaN: non-finite input stays non-finite and never reaches an
/// undefined float→int conversion. (One select, not early returns: a loop of these vectorizes.)
KOKKOS_INLINE_FUNCTION int quantize(float v, float step, int levels) {
  using std::rint;
  const float r = rint(v / step), lo = float(-levels), hi = float(levels - 1);
  return step != 0.0f && r == r ? int(r < lo ? lo : (r > hi ? hi : r)) : 0;
}

KOKKOS_INLINE_FUNCTION float dequantize(int q, float step) { return float(q) * step; }

/// The int8 code of a stored error e with step max|e|/127 (0 where the ratio is not finite).
KOKKOS_INLINE_FUNCTION std::int8_t error_code(float e, float step) {
  using std::rint;
  if (step == 0.0f) return 0;
  const float r = rint(e / step);
  return r == r && r >= -127.0f && r <= 127.0f ? std::int8_t(r) : std::int8_t(0);
}

KOKKOS_INLINE_FUNCTION float compensate(float beta, float e_old, float v, float deq) {
  return beta * e_old + (1.0f - beta) * (v - deq);
}

/// Where a chunk's parts sit: `groups` fp32 steps (4 bytes each, little-endian) and then
/// the codes, two to a byte when they have at most 4 bits. Chunks are padded to 4 bytes.
struct ChunkLayout {
  std::size_t length;  // values per chunk
  std::size_t group;   // values per group (even when two codes share a byte)
  std::size_t groups;  // per chunk
  int bits;
  int per_byte;
  std::size_t bytes;  // per chunk

  static ChunkLayout of(std::size_t length, std::size_t group, int bits) {
    const int per_byte = bits <= 4 ? 2 : 1;
    const std::size_t groups = (length + group - 1) / group;
    const std::size_t raw = 4 * groups + (length + per_byte - 1) / per_byte;
    return {length, group, groups, bits, per_byte, (raw + 3) / 4 * 4};
  }

  KOKKOS_INLINE_FUNCTION float step(const std::uint8_t* chunk, std::size_t g) const {
    const std::uint8_t* b = chunk + 4 * g;
    return precision::float_from_bits(std::uint32_t(b[0]) | std::uint32_t(b[1]) << 8 |
                                      std::uint32_t(b[2]) << 16 | std::uint32_t(b[3]) << 24);
  }
  KOKKOS_INLINE_FUNCTION void set_step(std::uint8_t* chunk, std::size_t g, float s) const {
    const std::uint32_t u = precision::to_bits(s);
    for (int j = 0; j < 4; ++j) chunk[4 * g + j] = std::uint8_t(u >> (8 * j));
  }
  KOKKOS_INLINE_FUNCTION int code(const std::uint8_t* chunk, std::size_t j) const {
    const std::uint8_t byte = chunk[4 * groups + (j >> (per_byte - 1))];  // per_byte: 1 or 2
    const int shift = int(j & std::size_t(per_byte - 1)) * 4;
    const int raw = (byte >> shift) & ((1 << bits) - 1);
    return raw >= (1 << (bits - 1)) ? raw - (1 << bits) : raw;  // two's complement
  }
  /// Packs the codes of values j0 and j0+1 (only j0 when one code fills a byte).
  KOKKOS_INLINE_FUNCTION void set_codes(std::uint8_t* chunk, std::size_t j0, int q0, int q1) const {
    const int mask = (1 << bits) - 1;
    chunk[4 * groups + j0 / per_byte] =
        std::uint8_t(per_byte == 2 ? (q0 & mask) | (q1 & mask) << 4 : (q0 & mask));
  }
  /// Value j of group g of a chunk (j counted from the chunk's start).
  KOKKOS_INLINE_FUNCTION float value(const std::uint8_t* chunk, std::size_t g,
                                     std::size_t j) const {
    return dequantize(code(chunk, j), step(chunk, g));
  }
};

}  // namespace minisgd::compress::loco
