#include "minisgd/data/line_blocks.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#define XXH_INLINE_ALL  // header-only, as in feature_hash.cpp
#include <xxhash.h>

#include "minisgd/core/errors.hpp"

namespace minisgd {

InputFile::InputFile(const std::string& path) : path_(path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; what is opened is checked, not
  // what a path named a moment before (the caller's is_regular_file may have raced).
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st {};
  if (fd_ < 0 || ::fstat(fd_, &st) != 0) {
    const int error = errno;
    if (fd_ >= 0) ::close(fd_);
    throw InputError(path + ": cannot open data file (" + std::strerror(error) + ")");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw InputError(path + ": the data file is not a regular file");
  }
  size_ = std::uint64_t(st.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::uint64_t sampled_xxh64(const InputFile& f) {
  constexpr std::uint64_t kBlocks = 64, kBlock = 4096;
  XXH64_state_t* h = XXH64_createState();
  XXH64_reset(h, 0);
  std::vector<char> buf(kBlock);
  const std::uint64_t size = f.size();
  for (std::uint64_t k = 0; k < kBlocks; ++k) {
    const std::uint64_t at =
        size <= kBlocks * kBlock ? k * kBlock : (size - kBlock) * k / (kBlocks - 1);
    if (at >= size) break;
    XXH64_update(h, buf.data(),
                 f.read_at(at, buf.data(), std::size_t(std::min(kBlock, size - at))));
  }
  const std::uint64_t sum = XXH64_digest(h);
  XXH64_freeState(h);
  return sum;
}

std::string sampled_fingerprint(const std::string& path) {
  const InputFile f(path);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(sampled_xxh64(f)));
  return std::to_string(f.size()) + " bytes, sampled xxh64 " + hex;
}

std::size_t InputFile::read_at(std::uint64_t offset, void* buf, std::size_t n) const {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd_, static_cast<char*>(buf) + done, n - done, off_t(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw InputError(path_ + ": read error (" + std::strerror(errno) + ")");
    if (r == 0) break;
    done += std::size_t(r);
  }
  return done;
}

std::uint64_t line_start_at_or_after(const InputFile& f, std::uint64_t offset) {
  if (offset == 0 || offset >= f.size()) return offset == 0 ? 0 : f.size();
  char buf[65536];
  for (std::uint64_t at = offset - 1; at < f.size(); at += sizeof buf) {
    const std::size_t n = f.read_at(at, buf, sizeof buf);
    const void* nl = std::memchr(buf, '\n', n);
    if (nl) return at + std::uint64_t(static_cast<const char*>(nl) - buf) + 1;
  }
  return f.size();
}

ByteRange line_aligned_range(const InputFile& f, int rank, int ranks) {
  const auto split = [&](int r) {
    return line_start_at_or_after(f, std::uint64_t((unsigned __int128)(f.size()) * r / ranks));
  };
  return {split(rank), rank + 1 == ranks ? f.size() : split(rank + 1)};
}

LineBlocks::LineBlocks(const InputFile& f, ByteRange range, std::size_t block_bytes)
    : f_(f), pos_(range.begin), end_(range.end), block_(block_bytes) {}

bool LineBlocks::next(const char** begin, const char** end) {
  // Keep the partial line that followed the last block.
  const std::size_t tail = kept_ - given_;
  if (given_ > 0) std::memmove(buf_.data(), buf_.data() + given_, tail);
  kept_ = tail;
  given_ = 0;
  for (;;) {
    const std::size_t want = std::size_t(std::min<std::uint64_t>(block_, end_ - pos_));
    if (buf_.size() < kept_ + want) buf_.resize(kept_ + want);
    const std::size_t n = want > 0 ? f_.read_at(pos_, buf_.data() + kept_, want) : 0;
    pos_ += n;
    read_ += n;
    kept_ += n;
    if (pos_ >= end_ || n < want) {  // the range is done: the rest is whole lines
      pos_ = end_;
      given_ = kept_;
      break;
    }
    const char* last = static_cast<const char*>(memrchr(buf_.data(), '\n', kept_));
    if (last) {
      given_ = std::size_t(last - buf_.data()) + 1;
      break;
    }  // a line longer than a block: read on
  }
  if (given_ == 0) return false;
  *begin = buf_.data();
  *end = buf_.data() + given_;
  return true;
}

}  // namespace minisgd
