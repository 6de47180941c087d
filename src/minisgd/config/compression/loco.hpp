#pragma once
// compression.loco: the deck parameters of LoCo (compress/loco.hpp).
#include <cstdint>

namespace minisgd {

struct LocoParams {
  int bits = 4;
  double beta = 0.8;
  std::int64_t reset_period = 1024;
  std::int64_t group_size = 128;

  template <class Section>
  void read(Section& s) {  // (as CastParams::read)
    bits = static_cast<int>(s.integer("bits", bits, 2, 8));
    if (bits != 4 && bits != 8)
      s.fail("bits", "codes are packed two to a byte or one to a byte: bits must be 4 or 8");
    beta = s.number("beta", beta, 0.0, 1.0);
    if (beta >= 1) s.fail("beta", "must be in [0, 1)");
    reset_period = s.integer("reset_period", reset_period, 1);
    group_size = s.integer("group_size", group_size, 2);
    if (group_size % 2) s.fail("group_size", "must be even (two 4-bit codes share a byte)");
  }
};

}  // namespace minisgd
