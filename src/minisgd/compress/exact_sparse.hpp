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
/// order). The nonzeros are found among the batch's columns when the step hands them over
/// (set_touched: O(nonzeros)), else by a scan of the d entries (in index order).
template <class T>
class ExactSparse final : public Compressor<T> {
 public:
  ExactSparse(comm::Communicator& comm, std::size_t d);
  void reduce(const Vector<T>& local, const Vector<T>& sum) override;
  nlohmann::json describe() const override;
  void state(StateArchive&) override {}  // stateless
  void set_touched(const std::int32_t* index, std::int64_t count) override {
    touched_ = index;
    touched_count_ = count;
    told_ = true;
  }
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
  const std::int32_t* touched_ = nullptr;  // the next reduce's touched entries (host)
  std::int64_t touched_count_ = 0;
  bool told_ = false;  // set_touched was called for the next reduce
};

}  // namespace minisgd::compress
