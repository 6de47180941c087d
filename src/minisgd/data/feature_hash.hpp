#pragma once
// Signed feature hashing (data.hash_bits: B): feature index i goes to column h mod 2^B with sign
// ±1 from h's top bit, h = XXH64 of the 1-based index (8 bytes, little-endian, seed 0) from
// the xxHash library, so the same index lands in the same column on every rank and run.
// Colliding features of a row are added (the sign keeps the inner products unbiased).
#include <cstdint>

#include "minisgd/data/libsvm.hpp"

namespace minisgd {

/// The column and sign of 0-based feature index `col` in a space of 2^bits columns.
struct HashedFeature {
  std::int64_t col;
  double sign;
};
HashedFeature hash_feature(std::int64_t col, int bits);

/// Hashes the rows of `rows` from row `first` on in place: each row's columns mapped, sorted
/// and the duplicates added, so that the rows are again well-formed CSR.
void hash_rows(ParsedRows& rows, std::int64_t first, int bits);

}  // namespace minisgd
