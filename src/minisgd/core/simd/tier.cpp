#include "minisgd/core/simd/tier.hpp"

#include <initializer_list>

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__)) && \
    !defined(__CUDACC__)
#include <cpuid.h>
#define MINISGD_SIMD_X86_PROBE 1
#endif

namespace minisgd::simd {

const char* name(Tier t) {
  switch (t) {
    case Tier::avx2: return "avx2";
    case Tier::avx512: return "avx512";
    default: return "generic";
  }
}

bool compiled(Tier t) {
  switch (t) {
    case Tier::generic: return true;
#ifdef MINISGD_SIMD_AVX2
    case Tier::avx2: return true;
#endif
#ifdef MINISGD_SIMD_AVX512
    case Tier::avx512: return true;
#endif
    default: return false;
  }
}

#ifdef MINISGD_SIMD_X86_PROBE
namespace {
/// F16C from CPUID leaf 1 (Clang's __builtin_cpu_supports does not know "f16c").
bool cpu_has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
}
}  // namespace
#endif

bool cpu_runs(Tier t) {
#ifdef MINISGD_SIMD_X86_PROBE  // (a CUDA build compiles the generic tier alone)
  // (__builtin_cpu_supports also checks that the OS saves the wider registers.)
  __builtin_cpu_init();  // (in case this runs before the constructors that call it)
  switch (t) {
    case Tier::generic: return true;
    case Tier::avx2: return __builtin_cpu_supports("avx2") && cpu_has_f16c();
    case Tier::avx512:
      return cpu_runs(Tier::avx2) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl");
  }
  return false;
#else
  return t == Tier::generic;
#endif
}

namespace {

/// The widest tier the compiler's target for this build has (MINISGD_ARCH).
#ifdef MINISGD_SIMD_FIXED_TARGET
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
constexpr Tier kTargetTier = Tier::avx512;
#elif defined(__AVX2__) && defined(__F16C__)
constexpr Tier kTargetTier = Tier::avx2;
#else
constexpr Tier kTargetTier = Tier::generic;
#endif
#endif

}  // namespace

Tier best_tier() {
  for (Tier t : {Tier::avx512, Tier::avx2}) {
#ifdef MINISGD_SIMD_FIXED_TARGET  // a build for one CPU runs nothing beyond it
    if (int(t) > int(kTargetTier)) continue;
#endif
    if (compiled(t) && cpu_runs(t)) return t;
  }
  return Tier::generic;
}

namespace detail {
Tier start_tier() {
  const Tier t = best_tier();
  int unset = -1;
  active.compare_exchange_strong(unset, int(t), std::memory_order_relaxed);
  return Tier(active.load(std::memory_order_relaxed));
}
}  // namespace detail

bool use_tier(Tier t) {
  if (!compiled(t) || !cpu_runs(t)) return false;
  detail::active.store(int(t), std::memory_order_relaxed);
  return true;
}

}  // namespace minisgd::simd
