#pragma once
#include <vector>

#include "minisgd/compress/compressor.hpp"
#include "minisgd/compress/form.hpp"
#include "minisgd/compress/sparse.hpp"
#include "minisgd/compress/staging.hpp"

namespace minisgd::compress {

/// Merges two (index, value) lists sorted by index into the k entries of largest |value| of
/// their sum (values at equal indices added; ties to the smaller index), sorted by index. The
/// same whichever list comes first.
std::vector<IndexValue> merge_top_k(const IndexValue* a, const IndexValue* b, std::size_t k);

/// The density of epoch e: p.warmup_density·(p.density/p.warmup_density)^(e/p.warmup_epochs)
/// for e < warmup_epochs (never below p.density), p.density after.
double gtopk_density(const GTopKParams& p, std::int64_t epoch);

/// Global top-k with error feedback. a = g + r; each rank selects its local top-k of |a|; the
/// lists are merged by recursive doubling (merge_top_k), k pairs per round, so every rank ends
/// with the same k pairs. This greedy hierarchical merge is an approximation of the top-k of
/// Σ_p a_p, exact at P = 1. A rank's entry is consumed only if it survived every merge on its
/// way up; everything else stays in its residual, so Σ_p a_p = result + Σ_p r_p.
/// Wire: 8-byte pairs, k per round, k·⌈log2 P⌉ pairs per rank and step at most.
///
/// Density warm-up, as gTop-k's reference trainer does (larger densities in the first epochs):
/// warmup_density in epoch 0, then geometrically down to the configured density, reached in
/// epoch warmup_epochs (gtopk_density). The residual carries over when k changes.
template <class T>
class GTopK final : public Compressor<T> {
 public:
  GTopK(comm::Communicator& comm, std::size_t d, const GTopKParams& p, Form form = kNativeForm);
  GTopK(comm::Communicator& comm, std::size_t d, double density, Form form = kNativeForm)
      : GTopK(comm, d, no_warmup(density), form) {}
  void reduce(const Vector<T>& local, const Vector<T>& sum) override;
  nlohmann::json describe() const override;
  void set_epoch(std::int64_t epoch) override;
  /// The residual (k follows from the epoch, set before every step).
  void state(StateArchive& a) override {
    a.view("gtopk.residual", local_.residual);
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
  static GTopKParams no_warmup(double density) {
    GTopKParams p;
    p.density = density;
    p.warmup_epochs = 0;
    return p;
  }

  comm::Communicator& comm_;
  Form form_;
  GTopKParams params_;
  std::size_t d_;
  ResidualTopK<T> local_;
  Staged<IndexValue> merged_, consumed_;
};

}  // namespace minisgd::compress
