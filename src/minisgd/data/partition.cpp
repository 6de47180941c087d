#include "minisgd/data/partition.hpp"

#include <numeric>
#include <utility>

namespace minisgd {

std::int64_t Partition::local_rows() const {
  if (decomposition == Decomposition::column) return rows;
  const std::int64_t tail = rows - batched_rows();
  const std::int64_t tail_here = tail > rank ? (tail - rank + ranks - 1) / ranks : 0;
  return batched_local() + tail_here;
}

std::int64_t Partition::col_begin() const {
  if (decomposition == Decomposition::row) return 0;
  const std::int64_t base = cols / ranks, extra = cols % ranks;
  return rank * base + (rank < extra ? rank : extra);
}

std::int64_t Partition::col_end() const {
  if (decomposition == Decomposition::row) return cols;
  const std::int64_t base = cols / ranks, extra = cols % ranks;
  return col_begin() + base + (rank < extra ? 1 : 0);
}

int Partition::owner(std::int64_t q) const {
  if (q < batched_rows()) return int(q % batch % ranks);
  return int((q - batched_rows()) % ranks);
}

std::int64_t Partition::local_index(std::int64_t q) const {
  if (decomposition == Decomposition::column) return q;
  if (owner(q) != rank) return -1;
  const std::int64_t nb = batched_rows();
  if (q < nb) return batch_first(q / batch) + q % batch / ranks;
  return batched_local() + (q - nb) / ranks;
}

namespace {

/// Uniform integer in [0, n) from a counter-based stream (stream, i): Lemire's
/// multiply-shift on 64 random bits; the bias for n < 2^40 is below 2^-24, irrelevant here.
std::uint64_t uniform_below(std::uint64_t n, std::uint64_t seed, std::uint64_t stream,
                            std::uint64_t i) {
  using Philox = r123::Philox4x32;
  Philox rng;
  const Philox::key_type key = {{std::uint32_t(seed), std::uint32_t(seed >> 32)}};
  const Philox::ctr_type ctr = {
      {std::uint32_t(i), std::uint32_t(i >> 32), std::uint32_t(stream), 0x5348u}};
  const auto r = rng(ctr, key);
  const std::uint64_t bits = (std::uint64_t(r[0]) << 32) | r[1];
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(bits) * n) >> 64);
}

std::vector<std::int64_t> permutation(std::int64_t n, std::uint64_t seed, std::uint64_t stream) {
  std::vector<std::int64_t> p(n);
  std::iota(p.begin(), p.end(), std::int64_t(0));
  // Swap targets are counter-based, so they are known ahead: the target of step i − kAhead is
  // drawn (and its cache line fetched) kAhead steps early, hiding the miss of a random access.
  constexpr std::int64_t kAhead = 16;
  std::int64_t target[kAhead];
  const auto draw = [&](std::int64_t i) {
    const std::int64_t j =
        std::int64_t(uniform_below(std::uint64_t(i) + 1, seed, stream, std::uint64_t(i)));
    __builtin_prefetch(&p[std::size_t(j)], 1);
    target[i % kAhead] = j;
  };
  for (std::int64_t i = n - 1; i > 0 && i > n - 1 - kAhead; --i) draw(i);
  for (std::int64_t i = n - 1; i > 0; --i) {
    const std::int64_t j = target[i % kAhead];
    if (i - kAhead > 0) draw(i - kAhead);
    std::swap(p[std::size_t(i)], p[std::size_t(j)]);
  }
  return p;
}

}  // namespace

std::vector<std::int64_t> shuffled_order(std::int64_t m, std::uint64_t seed, bool shuffle) {
  if (!shuffle) {
    std::vector<std::int64_t> p(m);
    std::iota(p.begin(), p.end(), std::int64_t(0));
    return p;
  }
  return permutation(m, seed, 0);
}

std::vector<std::int64_t> shuffled_positions(std::int64_t m, std::uint64_t seed, bool shuffle) {
  if (!shuffle) return {};
  const std::vector<std::int64_t> order = permutation(m, seed, 0);
  std::vector<std::int64_t> position(static_cast<std::size_t>(m));
  for (std::int64_t q = 0; q < m; ++q) position[static_cast<std::size_t>(order[q])] = q;
  return position;
}

std::vector<std::int64_t> batch_order(std::int64_t batches, std::uint64_t seed, std::int64_t epoch,
                                      bool reshuffle) {
  if (!reshuffle) return shuffled_order(batches, seed, false);
  return permutation(batches, seed, 1 + std::uint64_t(epoch));
}

}  // namespace minisgd
