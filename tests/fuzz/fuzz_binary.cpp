// libFuzzer target: the binary data readers' checks of untrusted bytes (ci/fuzz.sh builds and
// runs it), of the dense or the CSR form as bit 1 of the first byte says: read_header (magic,
// version, checksums, element type, shape against the file size), then, as every rank of
// load_binary together would, every block read, checked against its table checksum (and, CSR,
// its offsets and columns) and decoded. A file must be refused with a message or read within
// bounds; a crash, a sanitizer report, an allocation beyond -rss_limit_mb or an exception other
// than InputError is a finding.
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

/// reseal for the CSR form: the header's checksum, and each block's where its offsets lie
/// within the bytes.
void reseal_csr(std::vector<char>& file) {
  if (file.size() < sizeof(CsrHeader)) return;
  CsrHeader h;
  std::memcpy(&h, file.data(), sizeof h);
  const std::uint64_t room = (file.size() - sizeof h) / 8;
  if (h.rows > 0 && h.block_rows > 0 && h.entries >= 0 && h.element_bytes <= 8 &&
      std::uint64_t(h.rows) < room && std::uint64_t(h.entries) < file.size()) {
    const CsrLayout l = layout_of(h);
    std::vector<std::uint64_t> table(l.blocks);
    const auto in = [&](std::uint64_t at, std::uint64_t n) { return at + n <= file.size(); };
    for (std::uint64_t b = 0; b < l.blocks && in(l.table_at, 8 * l.blocks); ++b) {
      CsrBlock block;
      const std::uint64_t r0 = b * std::uint64_t(h.block_rows);
      const std::uint64_t n = std::min<std::uint64_t>(h.block_rows, h.rows - r0);
      if (!in(l.labels_at + 8 * r0, 8 * n) || !in(l.offsets_at + 8 * r0, 8 * (n + 1))) break;
      block.labels.resize(n);
      block.offsets.resize(n + 1);
      std::memcpy(block.labels.data(), file.data() + l.labels_at + 8 * r0, 8 * n);
      std::memcpy(block.offsets.data(), file.data() + l.offsets_at + 8 * r0, 8 * (n + 1));
      const std::int64_t e0 = block.offsets.front(), e1 = block.offsets.back();
      if (e0 < 0 || e1 < e0 ||
          !in(l.columns_at + 4 * std::uint64_t(e0), 4 * std::uint64_t(e1 - e0)) ||
          !in(l.values_at + h.element_bytes * std::uint64_t(e0),
              h.element_bytes * std::uint64_t(e1 - e0)))
        break;
      block.columns.resize(std::size_t(e1 - e0));
      if (e1 > e0)
        std::memcpy(block.columns.data(), file.data() + l.columns_at + 4 * e0,
                    4 * std::size_t(e1 - e0));
      const char* v = file.data() + l.values_at + h.element_bytes * std::uint64_t(e0);
      block.values.assign(v, v + h.element_bytes * std::size_t(e1 - e0));
      table[b] = block_checksum(block);
    }
    if (in(l.table_at, 8 * l.blocks)) {
      std::memcpy(file.data() + l.table_at, table.data(), 8 * l.blocks);
      h.table_checksum = checksum(table.data(), 8 * l.blocks);
    }
  }
  h.header_checksum = checksum(&h, offsetof(CsrHeader, header_checksum));
  std::memcpy(file.data(), &h, sizeof h);
}

/// The CSR reader on the same bytes: header, then every block read, checked and decoded.
void read_csr(const InputFile& f) {
  CsrHeader h{};
  if (!read_header(f, h).empty()) return;
  const CsrLayout l = layout_of(h);
  std::vector<std::uint64_t> table(l.blocks);
  f.read_at(l.table_at, table.data(), 8 * l.blocks);
  CsrBlock block;
  for (std::uint64_t b = 0; b < l.blocks; ++b) {
    if (!read_block(f, h, b, table[b], block).empty()) return;
    double sum = 0;
    for (std::size_t k = 0; k < block.columns.size(); ++k)
      sum += stored_element(block.values.data(), std::int64_t(k), h.element_bytes, h.container);
    if (std::isnan(sum) && sum == sum) __builtin_trap();  // keeps the decoding
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const std::string path = "/tmp/minisgd-fuzz-bin-" + std::to_string(getpid()) + ".dat";
  std::vector<char> file(reinterpret_cast<const char*>(data + 1),
                         reinterpret_cast<const char*>(data + size));
  const bool csr = data[0] & 2;  // which form the bytes are taken as
  if (data[0] & 1) csr ? reseal_csr(file) : reseal(file);
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(file.data(), std::streamsize(file.size()));
  try {
    InputFile f(path);
    if (csr) return read_csr(f), 0;
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
