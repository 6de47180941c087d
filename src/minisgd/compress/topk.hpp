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
  void state(StateArchive& a) override { a.view("topk.residual", local_.residual); }
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
