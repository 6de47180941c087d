// libFuzzer target: the binary data reader's checks of untrusted bytes (ci/fuzz.sh builds and
// runs it): read_header (magic, version, checksums, element type, shape against the file size),
// then, as every rank of load_binary together would, every block read, checked against its
// table checksum and decoded. A file must be refused with a message or read within bounds;
// a crash, a sanitizer report, an allocation beyond -rss_limit_mb or an exception other than
// InputError is a finding.
//
// Checksums make random bytes fail early, so the first input byte chooses how much of the
// input is taken as it is: with bit 0 set the target recomputes the header and table
// checksums of the forged file (as a careless or hostile writer would), which lets the
// fuzzer reach the shape, size and block checks and the decoding.
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "minisgd/core/errors.hpp"
#include "minisgd/data/binary_format.hpp"

using namespace minisgd;

namespace {

/// Makes the header and block table checksums agree with the rest of the bytes.
void reseal(std::vector<char>& file) {
  if (file.size() < sizeof(BinaryHeader)) return;
  BinaryHeader h;
  std::memcpy(&h, file.data(), sizeof h);
  if (h.rows > 0 && h.block_rows > 0) {
    const std::uint64_t blocks = (std::uint64_t(h.rows) - 1) / std::uint64_t(h.block_rows) + 1;
    const std::uint64_t room = (file.size() - sizeof h) / 8;
    if (blocks <= room) {
      // Each block's checksum as a writer would compute it, where the layout fits the bytes.
      const BinaryLayout l = layout_of(h);
      std::vector<std::uint64_t> table(blocks);
      for (std::uint64_t b = 0; b < blocks; ++b) {
        const std::uint64_t r0 = b * std::uint64_t(h.block_rows);
        const std::uint64_t n = std::min<std::uint64_t>(h.block_rows, h.rows - r0);
        const std::uint64_t lab = l.labels_at + 8 * r0, mat = l.matrix_at + l.row_bytes * r0;
        if (l.row_bytes > file.size() || n > file.size() || lab + 8 * n > file.size() ||
            mat + l.row_bytes * n > file.size())
          break;
        std::vector<char> buf(file.begin() + lab, file.begin() + lab + 8 * n);
        buf.insert(buf.end(), file.begin() + mat, file.begin() + mat + l.row_bytes * n);
        table[b] = checksum(buf.data() + 8 * n, l.row_bytes * n, checksum(buf.data(), 8 * n));
      }
      std::memcpy(file.data() + sizeof h, table.data(), 8 * blocks);
      h.table_checksum = checksum(table.data(), 8 * blocks);
    }
  }
  h.header_checksum = checksum(&h, offsetof(BinaryHeader, header_checksum));
  std::memcpy(file.data(), &h, sizeof h);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const std::string path = "/tmp/minisgd-fuzz-bin-" + std::to_string(getpid()) + ".dat";
  std::vector<char> file(reinterpret_cast<const char*>(data + 1),
                         reinterpret_cast<const char*>(data + size));
  if (data[0] & 1) reseal(file);
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(file.data(), std::streamsize(file.size()));
  try {
    InputFile f(path);
    BinaryHeader h{};
    if (!read_header(f, h).empty()) return 0;
    const BinaryLayout l = layout_of(h);
    std::vector<std::uint64_t> table(l.blocks);
    f.read_at(l.table_at, table.data(), 8 * l.blocks);
    std::vector<char> buf;
    for (std::uint64_t b = 0; b < l.blocks; ++b) {
      if (!read_block(f, h, b, table[b], buf).empty()) return 0;
      const std::int64_t n = std::int64_t(buf.size() / (8 + l.row_bytes));
      double sum = 0;
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t k = 0; k < h.features; ++k)
          sum += stored_element(buf.data() + 8 * n + std::size_t(i) * l.row_bytes, k, h);
      if (std::isnan(sum) && sum == sum) __builtin_trap();  // keeps the decoding
    }
  } catch (const InputError&) {
  }
  return 0;
}
