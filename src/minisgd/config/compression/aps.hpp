#pragma once
// compression.aps: the deck parameters of auto precision scaling (compress/aps.hpp).
#include <cstdint>
#include <stdexcept>
#include <string>

#include "minisgd/precision/format_spec.hpp"

namespace minisgd {

struct ApsParams {
  std::string format = "e5m2";  // wire format, at most 16 bits (precision::parse_format names)
  std::int64_t block_size = 256;
  bool kahan = false;
  bool scaling =
      true;  // false: every block's shift 0 (the unscaled ablation; no exponent AllReduce)

  template <class Section>
  void read(Section& s) {  // (as CastParams::read)
    format = s.text("format", format);
    try {
      precision::wire_format(format);
    } catch (const std::invalid_argument& e) {
      s.fail("format", e.what());
    }
    block_size = s.integer("block_size", block_size, 1);
    kahan = s.flag("kahan", kahan);
    scaling = s.flag("scaling", scaling);
  }
};

}  // namespace minisgd
