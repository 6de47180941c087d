#pragma once
// compression.qsgd: the deck parameters of QSGD (compress/qsgd.hpp), which Global-QSGD's
// extend (config/compression/global_qsgd.hpp).
#include "minisgd/core/names.hpp"

namespace minisgd {

/// qsgd / global-qsgd dithering: uniform levels, or one-byte power-of-two codes.
enum class Dithering { standard, exponential };
constexpr NameTable<Dithering, 2> names(Dithering) {
  return {{{Dithering::standard, "standard"}, {Dithering::exponential, "exponential"}}};
}

struct QuantizeParams {
  int bits = 8;
  Dithering dithering = Dithering::standard;

  template <class Section>
  void read(Section& s) {  // (as CastParams::read)
    bits = static_cast<int>(s.integer("bits", bits, 2, 16));
    dithering = s.choice("dithering", dithering);
    if (dithering == Dithering::exponential && bits != 8)
      s.fail("bits", "exponential dithering sends one-byte codes: bits must be 8");
  }
};

}  // namespace minisgd
