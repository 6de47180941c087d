// libFuzzer target: the LIBSVM reader (ci/fuzz.sh builds and runs it). The first byte picks
// the feature count (0: inferred); the rest is the file. Bad input
// must end in InputError; any other exception or a crash is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "minisgd/core/errors.hpp"
#include "minisgd/data/raw_data.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const std::string path = "/tmp/minisgd-fuzz-" + std::to_string(getpid()) + ".dat";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + 1), std::streamsize(size - 1));
  }
  try {
    minisgd::read_libsvm(path, data[0] % 2 ? 1 + data[0] / 2 % 32 : 0);
  } catch (const minisgd::InputError&) {
  }
  return 0;
}
