#pragma once
// What the deck asks for against what this build and machine can serve (app/capabilities.hpp):
// cuBLAS Gram, TF32, NCCL, CUDA-aware MPI. The deck reader checks only the deck itself.
#include "minisgd/config/config.hpp"

namespace minisgd {

/// Throws InputError naming the deck key (file:line or --set) of the first request this
/// build cannot serve.
void check_capabilities(const Config& c);

}  // namespace minisgd
