#pragma once
// Random inputs the tests and the benchmarks share (testkit/: never part of libminisgd).
#include <cstdint>
#include <random>

#include "minisgd/core/huge_pages.hpp"
#include "minisgd/core/kokkos.hpp"
#include "minisgd/precision/storage_types.hpp"

namespace minisgd::testkit {

/// A rows × n matrix of uniform values in [−1, 1) rounded to T, the same values for the same
/// seed on every machine (std::mt19937), so runs compare on identical inputs.
template <class T>
Matrix<T> random_rows(std::int64_t rows, std::int64_t n, unsigned seed = 1) {
  Matrix<T> Y(Kokkos::view_alloc(Kokkos::WithoutInitializing, "Y"), rows, n);
  advise_huge_pages(Y);  // as the training share is (data/share.hpp); every value is set below
  auto h = Kokkos::create_mirror_view(Y);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t k = 0; k < n; ++k) h(i, k) = precision::convert<T>(dist(gen));
  Kokkos::deep_copy(Y, h);
  return Y;
}

}  // namespace minisgd::testkit
