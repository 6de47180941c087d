#pragma once
// compression.topk: the deck parameters of local top-k (compress/topk.hpp), which gTop-k's
// extend (config/compression/gtopk.hpp).

namespace minisgd {

struct SparsifyParams {
  double density = 0.01;  // k = ⌈density·d⌉

  template <class Section>
  void read(Section& s) {  // (as CastParams::read)
    density = s.number("density", density, 0.0, 1.0);
    if (density <= 0) s.fail("density", "must be in (0, 1]");
  }
};

}  // namespace minisgd
