#pragma once
#include <vector>

#include "minisgd/compress/compressor.hpp"
#include "minisgd/compress/staging.hpp"

namespace minisgd::compress {

/// compression.method: sparse, an exact AllReduce of the coordinates some rank touched: each
/// rank sends its nonzero gradient entries as (32-bit index, value in T) through AllGathers
/// (the counts, then m = the largest count of indices and of values from every rank), and
/// every rank adds them up rank by rank into a zeroed sum. Per coordinate the sum is
/// ((g_0 + g_1) + ...) + g_{P−1} over the ranks holding a nonzero there, in rank order: the
/// dense AllReduce's sum up to rounding (bit-identical where its reduction adds in rank
/// order). First version: the nonzeros are found by a scan of the d entries (the interface
/// hands over the gradient vector only), not from the batch's CSR column indices.
template <class T>
class ExactSparse final : public Compressor<T> {
 public:
  ExactSparse(comm::Communicator& comm, std::size_t d);
  void reduce(const Vector<T>& local, const Vector<T>& sum) override;
  nlohmann::json describe() const override;
  void state(StateArchive&) override {}  // stateless
  /// Pairs sent per rank at the last reduce (the largest count over the ranks).
  std::int64_t last_pairs() const { return last_max_; }

 private:
  comm::Communicator& comm_;
  Staged<std::int32_t> index_;
  Staged<T> value_;
  Staged<std::int32_t> gathered_index_;
  Staged<T> gathered_value_;
  std::vector<std::int64_t> counts_;
  std::int64_t last_max_ = 0;
};

}  // namespace minisgd::compress
