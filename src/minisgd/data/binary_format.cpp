#include "minisgd/data/binary_format.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "minisgd/precision/storage_types.hpp"

namespace minisgd {
namespace {

constexpr char kMagic[8] = {'M', 'S', 'G', 'D', 'B', 'I', 'N', '\0'};
constexpr char kCsrMagic[8] = {'M', 'S', 'G', 'D', 'C', 'S', 'R', '\0'};
constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ull;

std::uint64_t mix(std::uint64_t h) {
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  return h;
}

/// Checks a header's element type (container name and element size); "" or why not.
std::string element_type_error(char (&container)[8], char (&format)[24], std::uint32_t bytes) {
  container[sizeof container - 1] = format[sizeof format - 1] = '\0';
  const std::string ct = container;
  const std::uint32_t want = ct == "fp64"                   ? 8
                             : ct == "fp32"                 ? 4
                             : ct == "bf16" || ct == "fp16" ? 2
                                                            : 0;
  if (want == 0) return "unknown element type '" + ct + "'";
  if (bytes != want) return "header gives " + ct + " elements " + std::to_string(bytes) + " bytes";
  return {};
}

/// Rows per checksum block for rows of about `row_bytes` bytes: blocks of about 4 MiB, the unit
/// a reader checks and the buffer it needs.
std::int64_t block_rows_for(double row_bytes) {
  return std::max<std::int64_t>(
      1, std::int64_t(double(std::int64_t(4) << 20) / std::max(1.0, row_bytes)));
}

/// The size a file of `total` bytes must have, as the end of the message that refuses it.
std::string size_mismatch(std::uint64_t file_bytes, unsigned __int128 total, std::int64_t rows,
                          std::int64_t features) {
  return "is " + std::to_string(file_bytes) + " bytes, its header's shape (" +
         std::to_string(rows) + " x " + std::to_string(features) + ") needs " +
         (total >> 64 ? std::string("more than 2^64") : std::to_string(std::uint64_t(total))) +
         ((unsigned __int128)(file_bytes) < total ? ": truncated" : ": damaged");
}

}  // namespace

std::uint64_t checksum(const void* data, std::size_t n, std::uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  // Four independent lanes so that the multiplications overlap.
  std::uint64_t lane[4] = {seed ^ 1, seed ^ 2, seed ^ 3, seed ^ 4};
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int k = 0; k < 4; ++k) {
      std::uint64_t w;
      std::memcpy(&w, p + i + 8 * k, 8);
      lane[k] = (lane[k] ^ w) * kMul;
      lane[k] ^= lane[k] >> 29;
    }
  std::uint64_t h = mix(lane[0]) ^ mix(lane[1] + 1) ^ mix(lane[2] + 2) ^ mix(lane[3] + 3);
  for (; i < n; ++i) h = (h ^ p[i]) * kMul;
  return mix(h ^ n);
}

BinaryLayout layout_of(const BinaryHeader& h) {
  BinaryLayout l{};
  l.row_bytes = std::uint64_t(h.features) * h.element_bytes;
  // Unsigned: a forged header wraps here instead of overflowing (read_header refuses it).
  l.blocks = h.rows > 0 && h.block_rows > 0
                 ? (std::uint64_t(h.rows) - 1) / std::uint64_t(h.block_rows) + 1
                 : 0;
  l.table_at = sizeof(BinaryHeader);
  l.labels_at = l.table_at + 8 * l.blocks;
  l.matrix_at = l.labels_at + 8 * std::uint64_t(h.rows);
  l.total = l.matrix_at + l.row_bytes * std::uint64_t(h.rows);
  return l;
}

namespace {

/// The fields both forms' headers share.
template <class Header>
Header header_of(const char (&magic)[8], std::uint32_t version, std::int64_t rows,
                 std::int64_t features, const std::string& container, std::size_t element_bytes,
                 const std::string& format) {
  Header h{};
  std::memcpy(h.magic, magic, 8);
  h.version = version;
  h.element_bytes = std::uint32_t(element_bytes);
  std::strncpy(h.container, container.c_str(), sizeof h.container - 1);
  std::strncpy(h.format, format.c_str(), sizeof h.format - 1);
  h.rows = rows;
  h.features = features;
  return h;
}

}  // namespace

BinaryHeader make_header(std::int64_t rows, std::int64_t features, const std::string& container,
                         std::size_t element_bytes, const std::string& format) {
  BinaryHeader h = header_of<BinaryHeader>(kMagic, kBinaryVersion, rows, features, container,
                                           element_bytes, format);
  // Blocks of about 4 MiB: the unit a reader checks and the buffer it needs.
  h.block_rows = block_rows_for(double(features) * double(element_bytes) + 8);
  return h;
}

std::string read_header(const InputFile& f, BinaryHeader& h) {
  if (f.read_at(0, &h, sizeof h) != sizeof h) return "too short for a minisgd binary data file";
  if (std::memcmp(h.magic, kMagic, 8) != 0) return "not a minisgd binary data file";
  if (h.version != kBinaryVersion)
    return "binary format version " + std::to_string(h.version) + ", this build reads version " +
           std::to_string(kBinaryVersion);
  if (checksum(&h, offsetof(BinaryHeader, header_checksum)) != h.header_checksum)
    return "header fails its checksum: the file is corrupt";
  if (std::string why = element_type_error(h.container, h.format, h.element_bytes); !why.empty())
    return why;
  const std::uint32_t bytes = h.element_bytes;
  if (h.rows < 1 || h.features < 1 || h.block_rows < 1) return "header has an empty shape";
  // The size the shape implies, in 128 bits: a forged shape cannot wrap around to the file's
  // size, so every count below is bounded by the file's size before it sizes a buffer.
  using u128 = unsigned __int128;
  const u128 rows = u128(h.rows), blocks = (rows + u128(h.block_rows) - 1) / u128(h.block_rows);
  const u128 row_bytes = u128(h.features) * bytes;
  const u128 total = sizeof(BinaryHeader) + 8 * blocks + rows * (8 + row_bytes);
  if (total != f.size()) return size_mismatch(f.size(), total, h.rows, h.features);
  if (h.block_rows > 1 && std::min(rows, u128(h.block_rows)) * (8 + row_bytes) > kMaxBlockBytes)
    return "header has checksum blocks of " + std::to_string(h.block_rows) +
           " rows, more than the " + std::to_string(kMaxBlockBytes >> 20) + " MiB a reader buffers";
  const BinaryLayout l = layout_of(h);
  std::vector<std::uint64_t> table(l.blocks);
  f.read_at(l.table_at, table.data(), 8 * l.blocks);
  if (checksum(table.data(), 8 * l.blocks) != h.table_checksum)
    return "block table fails its checksum: the file is corrupt";
  return {};
}

std::string read_block(const InputFile& f, const BinaryHeader& h, std::uint64_t b,
                       std::uint64_t expected, std::vector<char>& buf) {
  const BinaryLayout l = layout_of(h);
  const std::int64_t r0 = std::int64_t(b) * h.block_rows;
  const std::int64_t n = std::min(h.block_rows, h.rows - r0);
  buf.resize(std::size_t(n) * (8 + l.row_bytes));
  char* labels = buf.data();
  char* rows = buf.data() + 8 * n;
  const std::size_t got =
      f.read_at(l.labels_at + 8 * std::uint64_t(r0), labels, 8 * std::size_t(n)) +
      f.read_at(l.matrix_at + l.row_bytes * std::uint64_t(r0), rows, l.row_bytes * std::size_t(n));
  const std::uint64_t sum =
      checksum(rows, l.row_bytes * std::size_t(n), checksum(labels, 8 * std::size_t(n)));
  if (got != buf.size() || sum != expected)
    return f.path() + ": rows " + std::to_string(r0 + 1) + "-" + std::to_string(r0 + n) +
           " fail their checksum: the file is corrupt";
  return {};
}

double stored_element(const char* values, std::int64_t k, std::uint32_t element_bytes,
                      const char* container) {
  switch (element_bytes) {
    case 8: {
      double v;
      std::memcpy(&v, values + 8 * k, 8);
      return v;
    }
    case 4: {
      float v;
      std::memcpy(&v, values + 4 * k, 4);
      return v;
    }
    default: {
      std::uint16_t bits;
      std::memcpy(&bits, values + 2 * k, 2);
      return container[0] == 'b' ? precision::to_double(precision::bf16{bits})
                                 : precision::to_double(precision::fp16{bits});
    }
  }
}

double stored_element(const char* row, std::int64_t k, const BinaryHeader& h) {
  return stored_element(row, k, h.element_bytes, h.container);
}

// ---- compressed sparse rows ---------------------------------------------------------------

CsrLayout layout_of(const CsrHeader& h) {
  CsrLayout l{};
  l.blocks = h.rows > 0 && h.block_rows > 0
                 ? (std::uint64_t(h.rows) - 1) / std::uint64_t(h.block_rows) + 1
                 : 0;
  l.table_at = sizeof(CsrHeader);
  l.labels_at = l.table_at + 8 * l.blocks;
  l.offsets_at = l.labels_at + 8 * std::uint64_t(h.rows);
  l.columns_at = l.offsets_at + 8 * (std::uint64_t(h.rows) + 1);
  l.values_at = l.columns_at + 4 * std::uint64_t(h.entries);
  l.total = l.values_at + std::uint64_t(h.element_bytes) * std::uint64_t(h.entries);
  return l;
}

CsrHeader make_csr_header(std::int64_t rows, std::int64_t features, std::int64_t entries,
                          const std::string& container, std::size_t element_bytes,
                          const std::string& format) {
  CsrHeader h = header_of<CsrHeader>(kCsrMagic, kCsrVersion, rows, features, container,
                                     element_bytes, format);
  h.entries = entries;
  // By the mean row: a block of rows much denser than the mean can exceed what a reader
  // buffers, and is then refused as read_block says.
  h.block_rows = block_rows_for(16 + double(entries) / double(std::max<std::int64_t>(1, rows)) *
                                         double(4 + element_bytes));
  return h;
}

BinaryForm binary_form(const InputFile& f) {
  char magic[8] = {};
  if (f.read_at(0, magic, 8) != 8) return BinaryForm::unknown;
  if (std::memcmp(magic, kMagic, 8) == 0) return BinaryForm::dense;
  if (std::memcmp(magic, kCsrMagic, 8) == 0) return BinaryForm::csr;
  return BinaryForm::unknown;
}

std::string read_header(const InputFile& f, CsrHeader& h) {
  if (f.read_at(0, &h, sizeof h) != sizeof h) return "too short for a minisgd binary data file";
  if (std::memcmp(h.magic, kCsrMagic, 8) != 0) return "not a minisgd sparse binary data file";
  if (h.version != kCsrVersion)
    return "sparse binary format version " + std::to_string(h.version) +
           ", this build reads version " + std::to_string(kCsrVersion);
  if (checksum(&h, offsetof(CsrHeader, header_checksum)) != h.header_checksum)
    return "header fails its checksum: the file is corrupt";
  if (std::string why = element_type_error(h.container, h.format, h.element_bytes); !why.empty())
    return why;
  if (h.rows < 1 || h.features < 1 || h.block_rows < 1 || h.entries < 0)
    return "header has an empty shape";
  if (h.features >= (std::int64_t(1) << 31))
    return "header has " + std::to_string(h.features) + " features: 32-bit columns hold 2^31";
  using u128 = unsigned __int128;
  const u128 rows = u128(h.rows), blocks = (rows + u128(h.block_rows) - 1) / u128(h.block_rows);
  const u128 total = sizeof(CsrHeader) + 8 * blocks + 8 * rows + 8 * (rows + 1) +
                     u128(h.entries) * (4 + h.element_bytes);
  if (total != f.size()) return size_mismatch(f.size(), total, h.rows, h.features);
  const CsrLayout l = layout_of(h);
  std::vector<std::uint64_t> table(l.blocks);
  f.read_at(l.table_at, table.data(), 8 * l.blocks);
  if (checksum(table.data(), 8 * l.blocks) != h.table_checksum)
    return "block table fails its checksum: the file is corrupt";
  return {};
}

std::uint64_t block_checksum(const CsrBlock& b) {
  std::uint64_t sum = checksum(b.labels.data(), 8 * b.labels.size());
  sum = checksum(b.offsets.data(), 8 * b.offsets.size(), sum);
  sum = checksum(b.columns.data(), 4 * b.columns.size(), sum);
  return checksum(b.values.data(), b.values.size(), sum);
}

std::string read_block_bytes(const InputFile& f, const CsrHeader& h, std::uint64_t b,
                             CsrBlock& out) {
  const CsrLayout l = layout_of(h);
  const std::int64_t r0 = std::int64_t(b) * h.block_rows;
  const std::int64_t n = std::min(h.block_rows, h.rows - r0);
  const std::string rows =
      f.path() + ": rows " + std::to_string(r0 + 1) + "-" + std::to_string(r0 + n);
  out.first = r0;
  out.labels.resize(std::size_t(n));
  out.offsets.resize(std::size_t(n) + 1);
  std::size_t got = f.read_at(l.labels_at + 8 * std::uint64_t(r0), out.labels.data(), 8 * n);
  got += f.read_at(l.offsets_at + 8 * std::uint64_t(r0), out.offsets.data(), 8 * (n + 1));
  // The offsets size what follows: checked before they do (the checksum comes after).
  const std::int64_t e0 = out.offsets.front(), e1 = out.offsets.back();
  bool ok = got == 8 * std::size_t(2 * n + 1) && 0 <= e0 && e1 <= h.entries &&
            (r0 > 0 || e0 == 0) && (r0 + n < h.rows || e1 == h.entries);
  for (std::int64_t i = 0; ok && i < n; ++i)
    ok = out.offsets[std::size_t(i)] <= out.offsets[std::size_t(i) + 1];
  if (!ok) return rows + " have damaged row offsets: the file is corrupt";
  const std::uint64_t k = std::uint64_t(e1 - e0);
  if (n > 1 && 16 * std::uint64_t(n) + k * (4 + h.element_bytes) > kMaxBlockBytes)
    return rows + " hold more than the " + std::to_string(kMaxBlockBytes >> 20) +
           " MiB a reader buffers";
  out.columns.resize(k);
  out.values.resize(k * h.element_bytes);
  got = f.read_at(l.columns_at + 4 * std::uint64_t(e0), out.columns.data(), 4 * k);
  got += f.read_at(l.values_at + h.element_bytes * std::uint64_t(e0), out.values.data(),
                   out.values.size());
  if (got != 4 * k + out.values.size()) return rows + " are truncated: the file is corrupt";
  return {};
}

std::string read_block(const InputFile& f, const CsrHeader& h, std::uint64_t b,
                       std::uint64_t expected, CsrBlock& out) {
  if (std::string why = read_block_bytes(f, h, b, out); !why.empty()) return why;
  const std::int64_t r0 = out.first, n = out.rows(), e0 = out.offsets.front();
  if (block_checksum(out) != expected)
    return f.path() + ": rows " + std::to_string(r0 + 1) + "-" + std::to_string(r0 + n) +
           " fail their checksum: the file is corrupt";
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t last = -1;
    for (auto e = out.offsets[std::size_t(i)]; e < out.offsets[std::size_t(i) + 1]; ++e) {
      const std::int64_t j = out.columns[std::size_t(e - e0)];
      if (j <= last || j >= h.features)
        return f.path() + ": row " + std::to_string(r0 + i + 1) + " has column " +
               std::to_string(j + 1) + (j <= last ? " out of order" : " beyond the features");
      last = j;
    }
  }
  return {};
}

SourceStamp source_stamp(const std::string& path) {
  const InputFile f(path);
  struct stat st {};
  SourceStamp s;
  if (stat(path.c_str(), &st) == 0)
    s.mtime_ns = std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  s.bytes = f.size();
  s.sample = sampled_xxh64(f);
  return s;
}

}  // namespace minisgd
