// Each compressor's own work on one gradient: one reduce() at one rank, where the collective
// is a copy or nothing, so what is timed is the encode (error feedback, selection,
// quantization, packing) and the decode (unpacking, scattering, the sum). The merges that
// ranks apply to each other's payloads from P = 2 on are not in it.
//
// The rate counts the bytes the step model charges a compressor (perfmodel/step_model.cpp):
// four passes over d values of the gradient's type (encode reads g and writes its codes,
// decode reads the codes and writes the sum). So of_triad is the model's time over the
// measured one: 1 is a compressor as fast as the model assumes, 0.1 one ten times slower.
// Shapes: the paper decks' d = 2000 (in cache) and d = 2^22 (each vector 16 MB, beyond the
// caches together), default parameters of each method (docs/compression.md).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "support/local_compressor.hpp"
#include "support/stream_timing.hpp"

namespace {

using namespace minisgd;

template <class T>
void BM_Compress(benchmark::State& state, CompressionMethod method) {
  const std::int64_t d = state.range(0);
  perf::LocalCompressor<T> one(method, d);
  perf::time_streaming(state, 4.0 * double(d) * double(sizeof(T)),
                       [&](std::int64_t) { one.reduce(); });
}

/// One benchmark per method, named BM_Compress<method>.
const bool registered = [] {
  for (const auto& [m, method] : names(CompressionMethod{})) {
    const std::string name = "BM_Compress<" + std::string(method) + ">";
    benchmark::RegisterBenchmark(name.c_str(), BM_Compress<float>, m)
        ->ArgName("d")
        ->Arg(2000)
        ->Arg(std::int64_t(1) << 22)
        ->UseRealTime();
  }
  return true;
}();

}  // namespace
