// The exact top-k selection (compress/topk_select.hpp) against a stable sort: the k largest
// |a|, ties to the smaller index, sorted by index, with their fp32 values. Inputs crowd their
// magnitudes into a few values (so the threshold has many ties, across the host path's chunks of
// 65 536 keys), and hold ±0, subnormals, ±∞ and NaN.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "minisgd/compress/topk_select.hpp"

using namespace minisgd;
using compress::IndexValue;

namespace {

/// |x| as the selection orders it: the bits of the fp32 value without the sign (NaN above +∞).
std::uint32_t magnitude_key(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u & 0x7FFFFFFFu;
}

/// The reference: indices by key descending, the smaller index first among equal keys; the first
/// k, sorted by index.
std::vector<std::int32_t> reference(const std::vector<float>& a, std::size_t k) {
  std::vector<std::int32_t> order(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) order[i] = std::int32_t(i);
  std::stable_sort(order.begin(), order.end(), [&](std::int32_t p, std::int32_t q) {
    return magnitude_key(a[std::size_t(p)]) > magnitude_key(a[std::size_t(q)]);
  });
  order.resize(k);
  std::sort(order.begin(), order.end());
  return order;
}

template <class T>
void expect_selects_as_the_sort(const std::vector<float>& values, std::size_t k) {
  const std::size_t d = values.size();
  Vector<T> a("a", d);
  auto h = Kokkos::create_mirror_view(a);
  for (std::size_t i = 0; i < d; ++i) h(i) = T(values[i]);
  Kokkos::deep_copy(a, h);
  const std::vector<std::int32_t> expect = reference(values, k);
  // Both forms wherever the tests run: select() (the host loops on a CPU) and the kernels a
  // device runs, here on the CPU's backend.
  for (const bool kernels : {false, true}) {
    compress::TopKSelector<T> selector(d);
    Kokkos::View<IndexValue*, MemSpace> out("out", k);
    for (int call = 0; call < 2; ++call) {  // twice: nothing of the first call may linger
      if (kernels)
        selector.select_with_kernels(a, out);
      else
        selector.select(a, out);
    }
    auto got = Kokkos::create_mirror_view_and_copy(HostSpace(), out);
    int wrong = 0;
    for (std::size_t j = 0; j < k && wrong < 5; ++j) {
      const bool same_index = got(j).index == expect[j];
      const float want = values[std::size_t(expect[j])];
      const bool same_value = std::memcmp(&got(j).value, &want, sizeof want) == 0;
      if (!same_index || !same_value) {
        ++wrong;
        ADD_FAILURE() << (kernels ? "kernels" : "select") << ", d " << d << " k " << k << ": entry "
                      << j << " is index " << got(j).index << ", expected " << expect[j];
      }
    }
  }
}

/// d values whose magnitudes take few distinct values (`levels`), random signs, and the special
/// values at fixed places.
std::vector<float> crowded(std::size_t d, int levels, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> level(0, levels - 1), sign(0, 1);
  std::vector<float> a(d);
  for (float& x : a) x = (sign(gen) ? -1.0f : 1.0f) * std::ldexp(1.0f + level(gen) / 8.0f, -10);
  if (d > 40) {
    a[3] = 0.0f;
    a[5] = -0.0f;
    a[7] = std::numeric_limits<float>::denorm_min();
    a[11] = -std::numeric_limits<float>::infinity();
    a[d - 2] = std::numeric_limits<float>::quiet_NaN();
  }
  return a;
}

}  // namespace

TEST(TopKSelect, EqualsAStableSort) {
  const std::size_t big = 2 * 65536 + 5;  // three chunks of the host path, the last of 5 keys
  for (const std::size_t d : {std::size_t(1), std::size_t(7), std::size_t(2000), big}) {
    for (const int levels : {1, 3, 1000}) {
      const std::vector<float> a = crowded(d, levels, unsigned(d + levels));
      for (const std::size_t k : {std::size_t(1), (d + 99) / 100, d / 3 + 1, d}) {
        expect_selects_as_the_sort<float>(a, std::min(k, d));
        expect_selects_as_the_sort<double>(a, std::min(k, d));
      }
    }
  }
}

// Every value in one bin of the first digit, and the k-th largest key's ties split across the
// chunks: the ties taken must be the first ones in index order, whichever chunk holds them.
TEST(TopKSelect, TakesTheFirstTiesAcrossChunks) {
  const std::size_t d = 3 * 65536;
  std::vector<float> a(d, 0.5f);
  for (std::size_t i = 0; i < d; i += 1000) a[i] = 0.75f;  // 197 larger values
  for (const std::size_t k : {std::size_t(197), std::size_t(198), std::size_t(65536 + 300)})
    expect_selects_as_the_sort<float>(a, k);
}
