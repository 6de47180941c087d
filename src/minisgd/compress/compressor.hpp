#pragma once
// Compressed gradient reduction for the row decomposition (docs/design.md). A compressor takes this
// rank's gradient contribution and returns, on every rank, the same estimate of the sum of all
// ranks' contributions; it owns its state (residuals, error buffers, step counter) and its
// collective. The contributions are unnormalized sums over the rank's rows of the batch, so
// the sum is b times the mean batch gradient: the optimizer applies the 1/b (this keeps the
// dense path bit-identical to a plain AllReduce followed by the SGD update).
#include <cstdint>
#include <memory>

#include <nlohmann/json_fwd.hpp>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/compress/form.hpp"
#include "minisgd/config/config.hpp"
#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/state_archive.hpp"

namespace minisgd::compress {

template <class T>
class Compressor {
 public:
  virtual ~Compressor() = default;
  /// sum ← estimate of Σ_ranks local. Collective over the compressor's communicator;
  /// `local` and `sum` are distinct views of the gradient's length.
  virtual void reduce(const Vector<T>& local, const Vector<T>& sum) = 0;
  /// The method and the parameters in force, for the report.
  virtual nlohmann::json describe() const = 0;
  /// Called before each step's reduce with the step's epoch (gTop-k's density warm-up).
  virtual void set_epoch(std::int64_t /*epoch*/) {}
  /// Called before a reduce by a step whose gradient is sparse (a sparse share on a host
  /// backend): `local` is zero but for the `count` distinct indices at `index` (host memory,
  /// any order; null when count is 0). The compressors that can (sparse, top-k, gTop-k) then
  /// work on those entries
  /// and on their own state's nonzeros instead of scanning all d. Holds for the next reduce
  /// only; without it a reduce reads all d entries.
  virtual void set_touched(const std::int32_t* /*index*/, std::int64_t /*count*/) {}
  /// Saves or restores everything that carries from one step to the next (residuals, error
  /// buffers, step counters that key random bits), for a bitwise restart.
  virtual void state(StateArchive& a) = 0;
};

/// The compressor the deck asks for, for gradients of length d reduced over `comm`.
/// `seed` keys every random choice (with the step, rank and element), so runs reproduce.
/// `form` picks the body of a compressor that has two (form.hpp; the tests run both).
template <class T>
std::unique_ptr<Compressor<T>> make_compressor(const CompressionConfig& c, std::uint64_t seed,
                                               std::size_t d, comm::Communicator& comm,
                                               Form form = kNativeForm);

/// The bytes make_compressor<T> allocates for gradients of length d summed over `ranks` ranks,
/// at least (its residuals, codes, payloads and gathered messages; host copies and a
/// selection's scratch come on top): checked against the node's memory before it is made.
/// QSGD gathers every rank's codes, d·P bytes or more.
double state_bytes(const CompressionConfig& c, std::size_t d, int ranks, std::size_t value_bytes);

/// A key for sr_bits of its own per use, so independent random choices never share bits.
inline std::uint64_t stream_key(std::uint64_t seed, std::uint64_t stream) {
  return seed ^ (0x9E3779B97F4A7C15ull * (stream + 1));
}

}  // namespace minisgd::compress
