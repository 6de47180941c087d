#pragma once
// What APS should sum, built from the codec's per-value functions alone (the run-time packing,
// one element at a time) and the simulated schedule of its collective: the reference the codec
// tests and the compressor tests compare with.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "minisgd/compress/aps_codec.hpp"
#include "support/simulated_merge.hpp"

namespace minisgd::test {

/// The sum over P = g.size() simulated ranks of their values g[p] in blocks of `block` values:
/// each block's exponent from its largest |value| over the ranks (NaN ignored, as the
/// AllReduce-MAX of the exponents), a block zero on every rank summing to zero; encoded, merged
/// and decoded as the compressor does. Every rank's decoded copy must agree bit for bit;
/// `overflowed` (if given) tells whether any decoded value was not finite.
template <class T>
std::vector<double> aps_reference_sum(const std::vector<std::vector<T>>& g, std::size_t block,
                                      precision::CustomFormat f, bool kahan,
                                      bool* overflowed = nullptr) {
  namespace aps = compress::aps;
  const int P = int(g.size());
  const std::size_t d = g[0].size();
  const aps::Packing pack = aps::Packing::of(f, kahan);
  const int headroom = aps::headroom_bits(f, P);
  std::vector<int> shift((d + block - 1) / block), zero(shift.size());
  for (std::size_t l = 0; l < shift.size(); ++l) {
    float m = 0;
    for (int p = 0; p < P; ++p)
      for (std::size_t i = l * block; i < std::min((l + 1) * block, d); ++i)
        if (std::fabs(float(g[p][i])) > m) m = std::fabs(float(g[p][i]));
    const std::int16_t e = aps::block_exponent(m, P);
    zero[l] = e == aps::zero_block;
    shift[l] = zero[l] ? 0 : aps::block_shift(f, headroom, e);
  }
  // The compensation lane of each element starts at zero, as the buffers do.
  std::vector<std::vector<std::uint8_t>> data(
      P, std::vector<std::uint8_t>(pack.elements(d) * pack.element_bytes()));
  for (int p = 0; p < P; ++p)
    for (std::size_t el = 0; el < pack.elements(d); ++el) {
      std::uint32_t codes[2] = {0, 0};
      for (int j = 0; j < pack.per_word; ++j) {
        const std::size_t i = el * pack.per_word + j;
        if (i < d && !zero[i / block])
          codes[j] = aps::encode_scaled(float(g[p][i]), shift[i / block], f);
      }
      pack.put(&data[p][el * pack.element_bytes()], 0, codes);
    }
  simulate_merge_allreduce(comm::MergeShape::elementwise, data, pack.element_bytes(),
                           [&](std::uint8_t* own, const std::uint8_t* received, std::size_t,
                               std::size_t m, const comm::PlanStep&) {
                             for (std::size_t el = 0; el < m; ++el)
                               aps::merge_element(pack, f, own + el * pack.element_bytes(),
                                                  received + el * pack.element_bytes());
                           });
  std::vector<double> sum(d);
  if (overflowed) *overflowed = false;
  for (int p = 0; p < P; ++p)
    for (std::size_t i = 0; i < d; ++i) {
      const float v = aps::element_value(
          pack, f, &data[p][i / pack.per_word * pack.element_bytes()], int(i % pack.per_word));
      if (overflowed) *overflowed |= !std::isfinite(v);
      const double value = zero[i / block] ? 0.0 : double(aps::unscale(v, shift[i / block]));
      if (p == 0)
        sum[i] = value;
      else
        EXPECT_EQ(std::memcmp(&sum[i], &value, sizeof value), 0)
            << "ranks 0 and " << p << " disagree at " << i;
    }
  return sum;
}

}  // namespace minisgd::test
