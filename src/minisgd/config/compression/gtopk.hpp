#pragma once
// compression.gtopk: the deck parameters of global top-k (compress/gtopk.hpp).
#include <cstdint>

#include "minisgd/config/compression/topk.hpp"

namespace minisgd {

/// gTop-k's density warm-up: warmup_density in epoch 0, falling geometrically to `density`,
/// which holds from epoch warmup_epochs on (docs/compression.md).
struct GTopKParams : SparsifyParams {
  std::int64_t warmup_epochs = 4;  // 0: no warm-up
  double warmup_density = 0.25;

  template <class Section>
  void read(Section& s) {  // (as CastParams::read)
    SparsifyParams::read(s);
    warmup_epochs = s.integer("warmup_epochs", warmup_epochs, 0);
    warmup_density = s.number("warmup_density", warmup_density, 0.0, 1.0);
    if (warmup_density <= 0) s.fail("warmup_density", "must be in (0, 1]");
  }
};

}  // namespace minisgd
