#include "minisgd/core/atomic_file.hpp"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "minisgd/core/errors.hpp"

namespace minisgd {
namespace {

// A fixed table the signal handler can read without locks or allocation: a slot is live while
// its first byte is not NUL. A run has a few temporaries at once (outputs, a checkpoint, the
// data cache); more than the table holds are simply not removed by a signal.
constexpr std::size_t kSlots = 16, kPathBytes = 4096;
std::array<std::array<char, kPathBytes>, kSlots> temporaries{};
volatile sig_atomic_t stopping = 0;

extern "C" void on_stop_signal(int sig) {
  if (!stopping) {
    stopping = 1;
    for (auto& slot : temporaries)
      if (slot[0] != '\0') ::unlink(slot.data());
  }
  ::_exit(128 + sig);
}

std::string not_regular(const std::filesystem::path& target) {
  std::error_code ec;
  const auto st = std::filesystem::symlink_status(target, ec);
  if (ec || !std::filesystem::exists(st) || std::filesystem::is_regular_file(st)) return {};
  return target.string() + ": exists and is not a regular file; refusing to replace it";
}

}  // namespace

std::string replace_problem(const std::string& path) { return not_regular(path); }

void register_temporary(const std::string& path) {
  if (path.size() >= kPathBytes) return;
  for (auto& slot : temporaries)
    if (slot[0] == '\0') {
      std::memcpy(slot.data() + 1, path.c_str() + 1,
                  path.size());  // NUL-terminated, first byte last
      slot[0] = path[0];
      return;
    }
}

void forget_temporary(const std::string& path) {
  for (auto& slot : temporaries)
    if (slot[0] != '\0' && path == slot.data()) slot[0] = '\0';
}

void remove_temporaries_on_signal() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

std::string output_path_problem(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  if (std::string why = not_regular(target); !why.empty()) return why;
  // The directories the output will be written in are made for the probe and removed after
  // it: a run that fails before it writes leaves nothing behind (the write makes them again).
  std::vector<fs::path> made;
  std::error_code ec;
  for (fs::path dir = target.parent_path(); !dir.empty() && !fs::exists(dir, ec);
       dir = dir.parent_path()) {
    made.push_back(dir);
    if (dir == dir.parent_path()) break;
  }
  if (!made.empty()) fs::create_directories(made.front(), ec);
  const std::string probe = path + ".tmp.probe." + std::to_string(::getpid());
  register_temporary(probe);
  std::FILE* f = std::fopen(probe.c_str(), "wb");
  const int error = errno;
  if (f) std::fclose(f);
  std::remove(probe.c_str());
  forget_temporary(probe);
  for (const fs::path& dir : made) fs::remove(dir, ec);  // deepest first; only if still empty
  return f ? std::string() : path + ": cannot be written (" + std::strerror(error) + ")";
}

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& body) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  if (std::string why = not_regular(target); !why.empty()) throw RuntimeFailure(why);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  register_temporary(tmp);
  const auto fail = [&](const std::string& why) {
    std::remove(tmp.c_str());
    forget_temporary(tmp);
    throw RuntimeFailure(path + ": " + why);
  };
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail("cannot open for writing");
    try {
      body(out);
    } catch (...) {
      std::remove(tmp.c_str());
      forget_temporary(tmp);
      throw;
    }
    out.flush();
    if (!out) fail("write failed");
  }
  fs::rename(tmp, target, ec);
  if (ec) fail("cannot rename into place: " + ec.message());
  forget_temporary(tmp);
}

}  // namespace minisgd
