#pragma once
// One compressor and a gradient to reduce, with no network: what perf/bench_compress times and
// perf/calibrate measures. At one rank (MPI_COMM_SELF) the collective is a copy or nothing, so
// a reduce() is the encode and the decode; as rank 0 of P mirrored ranks (mirror_communicator
// .hpp) it also merges what the other ranks would have sent.
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "minisgd/comm/mpi_communicator.hpp"
#include "minisgd/compress/compressor.hpp"
#include "minisgd/config/deck.hpp"
#include "support/ceilings.hpp"
#include "support/mirror_communicator.hpp"

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
struct LocalCompressor {
  comm::MpiCommunicator self{MPI_COMM_SELF};
  MirrorCommunicator mirror;
  std::unique_ptr<compress::Compressor<T>> compressor;
  Vector<T> local, sum;

  /// `method` on d values, with its default parameters (docs/compression.md) but for `params`
  /// (deck text inside the method's own section, e.g. "dithering: exponential"); at one rank,
  /// or as rank 0 of `ranks` mirrored ones.
  LocalCompressor(CompressionMethod method, std::int64_t d, int ranks = 1,
                  const std::string& params = "")
      : mirror(ranks),
        local(stream_view<Vector<T>>("local", d)),
        sum(stream_view<Vector<T>>("sum", d)) {
    const std::string name = to_string(method);
    const std::string text = "compression: {method: " + name +
                             (params.empty() ? "" : ", " + name + ": {" + params + "}") + "}";
    const Config deck = parse_deck(text, "local_compressor");
    comm::Communicator& comm = ranks > 1 ? static_cast<comm::Communicator&>(mirror) : self;
    compressor = compress::make_compressor<T>(deck.compression, 42, std::size_t(d), comm);
    fill_gradient(local);
  }
  void reduce() { compressor->reduce(local, sum); }
};

}  // namespace minisgd::perf
