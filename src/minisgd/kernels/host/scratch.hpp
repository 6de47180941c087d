#pragma once
// What the host loops share besides their arithmetic: per-thread buffers kept between calls,
// and the prefetch hints. Compiled for the build's own target in every translation unit, the
// tiers' (kernels/host/tier_*.cpp) included.
#include <cstdint>
#include <vector>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/kernels/tuning.hpp"

namespace minisgd::host {

/// At least `size` floats, 64-byte aligned, for widened rows: one buffer per host thread,
/// kept between calls (it only grows), shared by the SGD and CA-SGD host loops, which never
/// hold it across a call of each other.
inline float* widening_scratch(std::int64_t size) {
  struct alignas(64) Line {
    float v[16];
  };
  thread_local std::vector<Line> buffer;
  if (std::int64_t(buffer.size()) * 16 < size) buffer.resize(std::size_t(size + 15) / 16);
  return buffer.front().v;
}

/// Values of A per 64-byte cache line, and the pitch of a row of n partial sums: rows start
/// on a line, so the vector loops over them never split one.
template <class A>
constexpr std::int64_t kLineValues = 64 / std::int64_t(sizeof(A));
template <class A>
constexpr std::int64_t partials_pitch(std::int64_t n) {
  return (n + kLineValues<A> - 1) / kLineValues<A> * kLineValues<A>;
}

/// At least `size` values of A, 64-byte aligned, for chunks' partial gradients: the calling
/// thread's buffer, kept between steps (it only grows).
template <class A>
inline A* partials_scratch(std::int64_t size) {
  struct alignas(64) Line {
    A v[kLineValues<A>];
  };
  thread_local std::vector<Line> buffer;
  const std::int64_t lines = kmax<std::int64_t>(1, (size + kLineValues<A> - 1) / kLineValues<A>);
  if (std::int64_t(buffer.size()) < lines) buffer.resize(std::size_t(lines));
  return buffer.front().v;
}

/// One prefetch per page (kPrefetchPageBytes) that starts in [begin, end). The hardware
/// prefetchers stop at page boundaries and start again only after misses in the new page, so
/// a stream of rows stalls at every page; a chunk ahead, this starts each page's translation
/// and first line early (where the pages are larger it costs a few instructions). Prefetching
/// every line of the next chunk instead made the SGD step slower.
inline void touch_pages(const void* begin, const void* end) {
#if defined(__GNUC__) || defined(__clang__)
  constexpr std::uintptr_t kPage = kPrefetchPageBytes;
  for (std::uintptr_t a = (std::uintptr_t(begin) + kPage - 1) & ~(kPage - 1);
       a < std::uintptr_t(end); a += kPage)
    __builtin_prefetch(reinterpret_cast<const void*>(a));
#else
  (void)begin, (void)end;
#endif
}

/// A prefetch of the cache line at p.
inline void prefetch_line(const void* p) {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

}  // namespace minisgd::host
