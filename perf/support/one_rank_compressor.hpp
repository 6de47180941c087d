#pragma once
// One compressor on a one-rank communicator and a gradient to reduce: what perf/bench_compress
// times and perf/calibrate measures (encode and decode; the collective a copy or nothing).
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "minisgd/comm/mpi_communicator.hpp"
#include "minisgd/compress/compressor.hpp"
#include "minisgd/config/deck.hpp"
#include "support/ceilings.hpp"

namespace minisgd::perf {

/// g(i) of mixed magnitudes and signs, as a batch's row sums are. (A free function: CUDA's
/// device lambdas may not be defined in a constructor.)
template <class T>
void fill_gradient(const Vector<T>& g) {
  Kokkos::parallel_for(
      "perf::gradient", Kokkos::RangePolicy<ExecSpace>(0, g.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i) {
        g(i) = T(std::sin(0.37 * double(i)) * double(1 + i % 13));
      });
}

template <class T>
struct OneRankCompressor {
  comm::MpiCommunicator self{MPI_COMM_SELF};
  std::unique_ptr<compress::Compressor<T>> compressor;
  Vector<T> local, sum;

  /// `method` with its default parameters (docs/compression.md) on d values.
  OneRankCompressor(CompressionMethod method, std::int64_t d)
      : local(stream_view<Vector<T>>("local", d)), sum(stream_view<Vector<T>>("sum", d)) {
    const Config deck = parse_deck("compression: {method: " + std::string(to_string(method)) + "}",
                                   "one_rank_compressor");
    compressor = compress::make_compressor<T>(deck.compression, 42, std::size_t(d), self);
    fill_gradient(local);
  }
  void reduce() { compressor->reduce(local, sum); }
};

}  // namespace minisgd::perf
