#pragma once
// Reading a byte range of a text file as blocks of whole lines, with a buffer of bounded
// size (the block size, or the longest line if that is longer), and the split of a file
// into one such range per rank, each starting at a line start.
#include <cstdint>
#include <string>
#include <vector>

namespace minisgd {

/// An open regular file, read with pread; closes itself. Throws InputError when it cannot be
/// opened or is not a regular file (a FIFO, a device, a directory).
class InputFile {
 public:
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  std::uint64_t size() const { return size_; }
  /// Reads up to n bytes at offset; returns the count (short only at the end of the file).
  std::size_t read_at(std::uint64_t offset, void* buf, std::size_t n) const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

/// A data file's content in a few reads, whatever its size: the XXH64 of 64 blocks of 4 KiB
/// spread evenly from its first byte to its last (the whole file up to 256 KiB). Another file,
/// a truncated, extended or regenerated one differ in the size or the hash; an edit that keeps
/// the size and falls between the samples does not show.
std::uint64_t sampled_xxh64(const InputFile& f);

/// sampled_xxh64 of the file at `path` as text: "N bytes, sampled xxh64 H".
std::string sampled_fingerprint(const std::string& path);

/// The first line start at or after `offset` (the file size if none).
std::uint64_t line_start_at_or_after(const InputFile& f, std::uint64_t offset);

/// Rank `rank`'s byte range [begin, end) of P: even splits moved to line starts.
struct ByteRange {
  std::uint64_t begin = 0, end = 0;
};
ByteRange line_aligned_range(const InputFile& f, int rank, int ranks);

class LineBlocks {
 public:
  LineBlocks(const InputFile& f, ByteRange range, std::size_t block_bytes);
  /// The next block of whole lines [*begin, *end) (the last may lack its newline), or false.
  bool next(const char** begin, const char** end);
  std::uint64_t bytes_read() const { return read_; }

 private:
  const InputFile& f_;
  std::uint64_t pos_, end_;
  std::size_t block_;
  std::vector<char> buf_;
  std::size_t kept_ = 0;   // bytes of a partial line kept from the last block
  std::size_t given_ = 0;  // bytes handed out by the last next()
  std::uint64_t read_ = 0;
};

}  // namespace minisgd
