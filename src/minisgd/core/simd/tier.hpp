#pragma once
// The vector tiers of the host kernels, chosen at run time from the CPU, as oneDNN and OpenBLAS
// choose theirs. Each tier's kernels are compiled in a translation unit of their own
// (kernels/host/tier_*.cpp, for that tier's instructions only), and the host kernels call
// the tier of active_tier(): from the first call on the widest tier that is compiled in and
// that this CPU runs. Every tier makes the same additions in the same order, so the results
// are the same bits whichever runs (tests/kernels/test_sgd_host_rows.cpp runs each).
//
// Which tiers are compiled in: all three on x86-64 with GCC 12+ or Clang (MINISGD_SIMD=auto,
// the default); the generic tier alone with MINISGD_SIMD=generic or elsewhere. A build for
// a fixed CPU (MINISGD_ARCH) runs no tier beyond what that CPU has.
#include <atomic>

namespace minisgd::simd {

/// generic: portable code the compiler vectorizes for the build's own target (SSE2 on
/// x86-64); avx2: 256-bit registers and F16C (Intel Haswell on, AMD Zen 1-3); avx512:
/// 512-bit registers with AVX512F, BW, DQ and VL (Intel Skylake-SP on, AMD Zen 4 on).
enum class Tier { generic, avx2, avx512 };
constexpr int kTiers = 3;

/// The tiers as types (the instruction set parameter of simd::Vec and of the host loops).
struct Generic {
  static constexpr Tier tier = Tier::generic;
};
struct Avx2 {
  static constexpr Tier tier = Tier::avx2;
};
struct Avx512 {
  static constexpr Tier tier = Tier::avx512;
};

/// "generic", "avx2" or "avx512".
const char* name(Tier t);

/// True when tier t's kernels are compiled into this build.
bool compiled(Tier t);

/// True when this CPU (and its operating system) runs tier t's instructions.
bool cpu_runs(Tier t);

/// The widest tier compiled in that this CPU runs, and within MINISGD_ARCH's target.
Tier best_tier();

namespace detail {
inline std::atomic<int> active{-1};
Tier start_tier();
}  // namespace detail

/// The tier the host kernels run: best_tier() unless use_tier chose another.
inline Tier active_tier() {
  const int t = detail::active.load(std::memory_order_relaxed);
  return t >= 0 ? Tier(t) : detail::start_tier();
}

/// Makes the host kernels run tier t from now on (the tests run every tier so). Returns false,
/// and changes nothing, where t is not compiled in or this CPU cannot run it.
bool use_tier(Tier t);

}  // namespace minisgd::simd
