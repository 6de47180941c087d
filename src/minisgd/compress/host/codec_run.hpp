#pragma once
// The host form's calls of the tier loops (compress/host/codec_kernels.hpp): the active tier's
// table looked up once, the values split among the host's threads in chunks of whole dither
// blocks (a value's bits depend on its index alone, so the split changes no bit).
#include <algorithm>
#include <cstdint>

#include "minisgd/compress/host/codec_kernels.hpp"
#include "minisgd/compress/staging.hpp"
#include "minisgd/core/simd/tier.hpp"

namespace minisgd::compress::codec {

/// Values a work item of the tier loops covers: 64 dither blocks of 16.
constexpr std::int64_t kCodecChunk = 1024;

/// f(i0, i1) for the chunks [i0, i1) of `chunk` items of [0, n) on the host's threads.
template <class F>
void for_chunks(const char* name, std::int64_t n, const F& f, std::int64_t chunk = kCodecChunk) {
  host_for(name, std::size_t((n + chunk - 1) / chunk), [=](std::size_t c) {
    const std::int64_t i0 = std::int64_t(c) * chunk;
    f(i0, std::min(n, i0 + chunk));
  });
}

/// The active tier's loops for T.
template <class T>
const CodecKernels<T>& active_codec() {
  return codec_kernels<T>(simd::active_tier());
}

}  // namespace minisgd::compress::codec
