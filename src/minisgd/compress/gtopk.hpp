#pragma once
#include <vector>

#include "minisgd/compress/compressor.hpp"
#include "minisgd/compress/sparse.hpp"
#include "minisgd/compress/staging.hpp"

namespace minisgd::compress {

/// Merges two (index, value) lists sorted by index into the k entries of largest |value| of
/// their sum (values at equal indices added; ties to the smaller index), sorted by index. The
/// same whichever list comes first.
std::vector<IndexValue> merge_top_k(const IndexValue* a, const IndexValue* b, std::size_t k);

/// Global top-k with error feedback. a = g + r; each rank selects its local top-k of |a|; the
/// lists are merged by recursive doubling (merge_top_k), k pairs per round, so every rank ends
/// with the same k pairs. This greedy hierarchical merge is an approximation of the top-k of
/// Σ_p a_p, exact at P = 1. A rank's entry is consumed only if it survived every merge on its
/// way up; everything else stays in its residual, so Σ_p a_p = result + Σ_p r_p.
/// Wire: 8-byte pairs, k per round, k·⌈log2 P⌉ pairs per rank and step at most.
template <class T>
class GTopK final : public Compressor<T> {
 public:
  GTopK(comm::Communicator& comm, std::size_t d, double density);
  void reduce(const Vector<T>& local, const Vector<T>& sum) override;
  nlohmann::json describe() const override;
  std::size_t k() const { return local_.k(); }
  const Vector<T>& residual() const { return local_.residual; }

 private:
  comm::Communicator& comm_;
  double density_;
  ResidualTopK<T> local_;
  Staged<IndexValue> merged_, consumed_;
};

}  // namespace minisgd::compress
