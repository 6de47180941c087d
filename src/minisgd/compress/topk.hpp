#pragma once
#include "minisgd/compress/compressor.hpp"
#include "minisgd/compress/form.hpp"
#include "minisgd/compress/sparse.hpp"
#include "minisgd/compress/staging.hpp"

namespace minisgd::compress {

/// Local top-k with error feedback: each rank sends its k = ⌈density·d⌉ largest entries of
/// gradient + residual as (index, value) pairs through an AllGather, (P−1)·k pairs per rank,
/// and keeps the rest in its residual; every rank adds up all P·k pairs.
template <class T>
class TopK final : public Compressor<T> {
 public:
  TopK(comm::Communicator& comm, std::size_t d, double density, Form form = kNativeForm);
  void reduce(const Vector<T>& local, const Vector<T>& sum) override;
  nlohmann::json describe() const override;
  void state(StateArchive& a) override {
    a.view("topk.residual", local_.residual);
    if (a.loading()) local_.state_restored();
  }
  void set_touched(const std::int32_t* index, std::int64_t count) override {
    local_.set_touched(index, count);
  }
  /// The last selection of this rank's top-k, sorted by index (for tests).
  const Kokkos::View<IndexValue*, MemSpace>& selection() const { return local_.selection.device; }
  /// Selections made on the gradient's support rather than all d (ResidualTopK).
  std::int64_t support_selections() const { return local_.support_selections(); }
  std::size_t k() const { return local_.k(); }
  const Vector<T>& residual() const { return local_.residual; }

 private:
  comm::Communicator& comm_;
  Form form_;
  double density_;
  ResidualTopK<T> local_;
  Staged<IndexValue> gathered_;
};

}  // namespace minisgd::compress
