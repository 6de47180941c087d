#pragma once
// bf16 × bf16 → fp32 block-row Gram products through oneDNN's matmul (host memory only).
// Built only with MINISGD_HAVE_DNNL; used only on CPUs with AVX512-BF16, where oneDNN's
// bf16 kernels run at about twice its fp32 rate.
#include <cstdint>
#include <memory>
#include <string>

#include "minisgd/precision/storage_types.hpp"

namespace minisgd {

class DnnlGram {
 public:
  /// Null when the CPU lacks AVX512-BF16 (or the build lacks oneDNN).
  static std::unique_ptr<DnnlGram> create();
  /// Why create() returns null on this build and CPU ("" when it does not).
  static std::string unavailable_reason();
  ~DnnlGram();

  /// packed block rows of the strictly block-lower Gram of Y (rows × n, row-major, row
  /// stride ld), as described in gram.hpp.
  void compute(const precision::bf16* Y, std::int64_t rows, std::int64_t n, std::int64_t ld,
               std::int64_t b, float* packed);
  std::string implementation() const { return implementation_; }

 private:
  struct State;
  explicit DnnlGram(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
  std::string implementation_;
};

}  // namespace minisgd
