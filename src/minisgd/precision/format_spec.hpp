#pragma once
// Run-time names of the precision formats (for decks and logs) and compile-time
// traits of the storage types.

#include <cctype>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "minisgd/precision/custom_format.hpp"
#include "minisgd/precision/storage_types.hpp"

namespace minisgd::precision {

enum class Format { fp64, fp32, bf16, fp16, fp8_e4m3, fp8_e5m2, custom };

// A parsed format; `custom` is meaningful only when format == Format::custom.
struct FormatSpec {
  Format format;
  CustomFormat custom;
};

constexpr const char* name(Format f) {
  switch (f) {
    case Format::fp64: return "fp64";
    case Format::fp32: return "fp32";
    case Format::bf16: return "bf16";
    case Format::fp16: return "fp16";
    case Format::fp8_e4m3: return "fp8_e4m3";
    case Format::fp8_e5m2: return "fp8_e5m2";
    case Format::custom: return "custom";
  }
  return "?";
}

// Bytes one value occupies in memory. Custom-format values are kept in a float; their
// wire codes are CustomFormat::bits() wide.
constexpr std::size_t bytes_per_value(Format f) {
  switch (f) {
    case Format::fp64: return 8;
    case Format::bf16:
    case Format::fp16: return 2;
    case Format::fp8_e4m3:
    case Format::fp8_e5m2: return 1;
    case Format::fp32:
    case Format::custom: return 4;
  }
  return 0;
}

// Unit roundoff u = 2^-(M+1) (half an ulp at 1); for Format::custom use
// CustomFormat::unit_roundoff().
inline double unit_roundoff(Format f) {
  switch (f) {
    case Format::fp64: return 0x1p-53;
    case Format::fp32: return 0x1p-24;
    case Format::bf16: return 0x1p-8;
    case Format::fp16: return 0x1p-11;
    case Format::fp8_e4m3: return 0x1p-4;
    case Format::fp8_e5m2: return 0x1p-3;
    case Format::custom: break;
  }
  throw std::invalid_argument("unit_roundoff: a custom format needs its CustomFormat");
}

// Accepts fp64, fp32, bf16, fp16, e4m3 | fp8_e4m3, e5m2 | fp8_e5m2, and custom formats
// e<E>m<M> | custom:e<E>m<M> (E in 2..8, M in 0..23; "custom:e4m3" is the IEEE-style
// E4M3, plain "e4m3" the fp8 type). Case-insensitive.
inline FormatSpec parse_format(const std::string& text) {
  std::string s = text;
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  const auto fixed = [](Format f) { return FormatSpec{f, CustomFormat{0, 0}}; };
  if (s == "fp64") return fixed(Format::fp64);
  if (s == "fp32") return fixed(Format::fp32);
  if (s == "bf16") return fixed(Format::bf16);
  if (s == "fp16") return fixed(Format::fp16);
  if (s == "e4m3" || s == "fp8_e4m3") return fixed(Format::fp8_e4m3);
  if (s == "e5m2" || s == "fp8_e5m2") return fixed(Format::fp8_e5m2);

  const std::string body = s.rfind("custom:", 0) == 0 ? s.substr(7) : s;
  std::size_t pos = 0;
  const auto number = [&](char tag) {  // "<tag><1 or 2 digits>" -> value, else -1
    if (pos >= body.size() || body[pos] != tag) return -1;
    const std::size_t start = ++pos;
    while (pos < body.size() && pos - start < 2 &&
           std::isdigit(static_cast<unsigned char>(body[pos])))
      ++pos;
    return pos == start ? -1 : std::stoi(body.substr(start, pos - start));
  };
  const int E = number('e');
  const int M = number('m');
  const CustomFormat custom{E, M};
  if (pos == body.size() && custom.valid()) return FormatSpec{Format::custom, custom};
  throw std::invalid_argument(
      "unknown precision format '" + text +
      "'; accepted: fp64, fp32, bf16, fp16, e4m3 (= fp8_e4m3), e5m2 (= fp8_e5m2), or a "
      "custom format e<E>m<M> / custom:e<E>m<M> with E in 2..8 and M in 0..23");
}

// Inverse of parse_format.
inline std::string to_string(const FormatSpec& spec) {
  if (spec.format != Format::custom) return name(spec.format);
  return "custom:e" + std::to_string(spec.custom.E) + "m" + std::to_string(spec.custom.M);
}

/// The IEEE-style wire format a deck's aps.format names. Codes at most 16 bits wide with at
/// most 10 fraction bits: wider codes save nothing, and a float sum of two such values
/// rounded once more to the format is correctly rounded (24 ≥ 2(M+1)+2 bits).
inline CustomFormat wire_format(const std::string& text) {
  const FormatSpec s = parse_format(text);
  CustomFormat f{0, 0};
  switch (s.format) {
    case Format::fp16: f = {5, 10}; break;
    case Format::bf16: f = {8, 7}; break;
    case Format::fp8_e5m2: f = {5, 2}; break;
    case Format::fp8_e4m3: f = {4, 3}; break;  // IEEE-style: max 240
    case Format::custom: f = s.custom; break;
    default: throw std::invalid_argument("'" + text + "' is not narrower than 16 bits");
  }
  if (f.bits() > 16 || f.M > 10)
    throw std::invalid_argument("'" + text + "' has " + std::to_string(f.bits()) + " bits and " +
                                std::to_string(f.M) + " fraction bits; at most 16 and 10");
  return f;
}

namespace detail {
template <Format F>
struct traits_of {
  static constexpr Format format = F;
  static constexpr int bytes = int(bytes_per_value(F));
  static constexpr const char* name = precision::name(F);
};
}  // namespace detail

template <class T>
struct format_traits;
template <>
struct format_traits<double> : detail::traits_of<Format::fp64> {};
template <>
struct format_traits<float> : detail::traits_of<Format::fp32> {};
template <>
struct format_traits<bf16> : detail::traits_of<Format::bf16> {};
template <>
struct format_traits<fp16> : detail::traits_of<Format::fp16> {};
template <>
struct format_traits<fp8_e4m3> : detail::traits_of<Format::fp8_e4m3> {};
template <>
struct format_traits<fp8_e5m2> : detail::traits_of<Format::fp8_e5m2> {};

}  // namespace minisgd::precision
