#pragma once
// The common case of a decimal number in a text data file, read without a library call:
// [+-]digits[.digits][(e|E)[+-]digits] with at most 19 digits, a significand w ≤ 2^53 and a
// decimal exponent q in [-22, 22]. Then w and 10^|q| are exact doubles, so w·10^q (or w/10^-q)
// is one correctly rounded operation: the same double as strtod and std::from_chars (Clinger's
// fast path). Numbers outside it, and anything that is not such a number, are left to
// std::from_chars by the caller.
#include <cstdint>
#include <cstring>

namespace minisgd {

/// Whether the eight bytes of v (little-endian) are all ASCII digits.
inline bool all_digits(std::uint64_t v) {
  return ((v & 0xF0F0F0F0F0F0F0F0) | (((v + 0x0606060606060606) & 0xF0F0F0F0F0F0F0F0) >> 4)) ==
         0x3333333333333333;
}

/// The value of eight ASCII digits (little-endian, first digit in the lowest byte), in three
/// multiplications instead of eight dependent steps.
inline std::uint32_t eight_digits(std::uint64_t v) {
  v -= 0x3030303030303030;
  v = v * 10 + (v >> 8);  // pairs of digits in every other byte
  v = (((v & 0x000000FF000000FF) * 0x000F424000000064) +
       (((v >> 16) & 0x000000FF000000FF) * 0x0000271000000001)) >>
      32;
  return std::uint32_t(v);
}

/// Reads the number at p; returns the end of it, or nullptr when [p, end) does not start with
/// a number of this form (the caller falls back to the general parser). The number ends where
/// the first byte that cannot continue it is (the caller checks what follows).
inline const char* parse_simple_decimal(const char* p, const char* end, double& out) {
  static constexpr double kPow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                        1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                        1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const auto digit = [](char c) { return static_cast<unsigned>(c - '0'); };
  // Signs without a branch: they are as random as the data.
  const bool negative = p < end && *p == '-';
  p += negative || (p < end && *p == '+');
  std::uint64_t w = 0;
  int digits = 0, exp10 = 0;
  for (; p < end && digit(*p) < 10; ++p, ++digits) w = 10 * w + digit(*p);
  if (p < end && *p == '.') {
    ++p;
    std::uint64_t eight;  // eight digits at once where the fraction has them
    if (end - p >= 8 && (std::memcpy(&eight, p, 8), all_digits(eight))) {
      w = 100000000 * w + eight_digits(eight);
      p += 8, digits += 8, exp10 -= 8;
    }
    for (; p < end && digit(*p) < 10; ++p, ++digits, --exp10) w = 10 * w + digit(*p);
  }
  if (digits == 0 || digits > 19 || w > (std::uint64_t(1) << 53)) return nullptr;
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    bool down = false;
    if (p < end && (*p == '-' || *p == '+')) down = *p++ == '-';
    int e = 0, n = 0;
    for (; p < end && digit(*p) < 10 && n < 3; ++p, ++n) e = 10 * e + int(digit(*p));
    if (n == 0 || (p < end && digit(*p) < 10)) return nullptr;
    exp10 += down ? -e : e;
  }
  if (exp10 < -22 || exp10 > 22) return nullptr;
  const double v = exp10 < 0 ? double(w) / kPow10[-exp10] : double(w) * kPow10[exp10];
  out = negative ? -v : v;
  return p;
}

}  // namespace minisgd
