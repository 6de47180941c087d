#pragma once
// compression.global-qsgd: the deck parameters of Global-QSGD (compress/global_qsgd.hpp).
#include "minisgd/config/compression/qsgd.hpp"

namespace minisgd {

struct GlobalQsgdParams : QuantizeParams {
  template <class Section>
  void read(Section& s) {  // (as CastParams::read)
    QuantizeParams::read(s);
    if (bits < 8)
      s.fail("bits",
             "Global-QSGD's codes are summed as whole integers (at least a byte "
             "each), so fewer bits would not send fewer bytes: bits must be 8 to 16");
  }
};

}  // namespace minisgd
