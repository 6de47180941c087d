#include "minisgd/core/atomic_file.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "minisgd/core/errors.hpp"

namespace minisgd {

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& body) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw RuntimeFailure(path + ": cannot open for writing");
    body(out);
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw RuntimeFailure(path + ": write failed");
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw RuntimeFailure(path + ": cannot rename into place: " + ec.message());
  }
}

}  // namespace minisgd
