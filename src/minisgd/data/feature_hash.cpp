#include "minisgd/data/feature_hash.hpp"

#define XXH_INLINE_ALL  // header-only: nothing to link, for minisgd or what links it
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

namespace minisgd {

HashedFeature hash_feature(std::int64_t col, int bits) {
  unsigned char bytes[8];
  const std::uint64_t index = std::uint64_t(col) + 1;  // the file's 1-based index
  for (int k = 0; k < 8; ++k) bytes[k] = static_cast<unsigned char>(index >> (8 * k));
  const std::uint64_t h = XXH64(bytes, sizeof bytes, 0);
  return {std::int64_t(h & ((std::uint64_t(1) << bits) - 1)), (h >> 63) ? -1.0 : 1.0};
}

void hash_rows(ParsedRows& rows, std::int64_t first, int bits) {
  std::vector<std::pair<std::int64_t, double>> row;
  std::size_t out = std::size_t(rows.row_ptr[std::size_t(first)]);
  for (std::int64_t k = first; k < rows.rows(); ++k) {
    const std::size_t b = std::size_t(rows.row_ptr[std::size_t(k)]);
    const std::size_t e = std::size_t(rows.row_ptr[std::size_t(k) + 1]);
    row.clear();
    for (std::size_t i = b; i < e; ++i) {
      const HashedFeature f = hash_feature(rows.col[i], bits);
      row.emplace_back(f.col, f.sign * rows.val[i]);
    }
    std::sort(row.begin(), row.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    rows.row_ptr[std::size_t(k)] = std::int64_t(out);
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i > 0 && row[i].first == row[i - 1].first) {
        rows.val[out - 1] += row[i].second;
        continue;
      }
      rows.col[out] = row[i].first;
      rows.val[out++] = row[i].second;
    }
  }
  rows.row_ptr[std::size_t(rows.rows())] = std::int64_t(out);
  rows.col.resize(out);
  rows.val.resize(out);
}

}  // namespace minisgd
