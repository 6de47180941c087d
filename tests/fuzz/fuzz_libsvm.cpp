// libFuzzer target: the LIBSVM reader and the binary cache reader (ci/fuzz.sh builds and runs
// it). The first byte picks the reader and the feature count; the rest is the file. Bad input
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
    switch (data[0] % 3) {
      case 0: minisgd::read_libsvm(path, 0); break;
      case 1: minisgd::read_libsvm(path, 1 + data[0] / 3 % 32); break;
      default: minisgd::read_binary(path); break;
    }
  } catch (const minisgd::InputError&) {
  }
  return 0;
}
