// Builds without oneDNN: DnnlGram::create() returns null, so BlockLowerGram never takes the
// dnnl path and bf16 Gram products use the portable team kernel (the report's kernels.gram).
#include <stdexcept>

#include "minisgd/kernels/gram/gram_dnnl.hpp"

namespace minisgd {

struct DnnlGram::State {};

DnnlGram::~DnnlGram() = default;

std::unique_ptr<DnnlGram> DnnlGram::create() { return nullptr; }

std::string DnnlGram::unavailable_reason() {
  return "built without oneDNN (MINISGD_ENABLE_DNNL=OFF or oneDNN not found)";
}

void DnnlGram::compute(const precision::bf16*, std::int64_t, std::int64_t, std::int64_t,
                       std::int64_t, float*) {
  throw std::logic_error("DnnlGram::compute: this build has no oneDNN");
}

}  // namespace minisgd
