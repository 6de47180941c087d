#include "minisgd/data/binary_format.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "minisgd/precision/storage_types.hpp"

namespace minisgd {
namespace {

constexpr char kMagic[8] = {'M', 'S', 'G', 'D', 'B', 'I', 'N', '\0'};
constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ull;

std::uint64_t mix(std::uint64_t h) {
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  return h;
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

BinaryHeader make_header(std::int64_t rows, std::int64_t features, const std::string& container,
                         std::size_t element_bytes, const std::string& format) {
  BinaryHeader h{};
  std::memcpy(h.magic, kMagic, 8);
  h.version = kBinaryVersion;
  h.element_bytes = std::uint32_t(element_bytes);
  std::strncpy(h.container, container.c_str(), sizeof h.container - 1);
  std::strncpy(h.format, format.c_str(), sizeof h.format - 1);
  h.rows = rows;
  h.features = features;
  // Blocks of about 4 MiB: the unit a reader checks and the buffer it needs.
  const std::int64_t row_bytes =
      std::max<std::int64_t>(1, features * std::int64_t(element_bytes) + 8);
  h.block_rows = std::max<std::int64_t>(1, (std::int64_t(4) << 20) / row_bytes);
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
  h.container[sizeof h.container - 1] = h.format[sizeof h.format - 1] = '\0';
  const std::string ct = h.container;
  const std::uint32_t bytes = ct == "fp64"                   ? 8
                              : ct == "fp32"                 ? 4
                              : ct == "bf16" || ct == "fp16" ? 2
                                                             : 0;
  if (bytes == 0) return "unknown element type '" + ct + "'";
  if (h.element_bytes != bytes)
    return "header gives " + ct + " elements " + std::to_string(h.element_bytes) + " bytes";
  if (h.rows < 1 || h.features < 1 || h.block_rows < 1) return "header has an empty shape";
  // The size the shape implies, in 128 bits: a forged shape cannot wrap around to the file's
  // size, so every count below is bounded by the file's size before it sizes a buffer.
  using u128 = unsigned __int128;
  const u128 rows = u128(h.rows), blocks = (rows + u128(h.block_rows) - 1) / u128(h.block_rows);
  const u128 row_bytes = u128(h.features) * bytes;
  const u128 total = sizeof(BinaryHeader) + 8 * blocks + rows * (8 + row_bytes);
  if (total != f.size())
    return "is " + std::to_string(f.size()) + " bytes, its header's shape (" +
           std::to_string(h.rows) + " x " + std::to_string(h.features) + ") needs " +
           (total >> 64 ? std::string("more than 2^64") : std::to_string(std::uint64_t(total))) +
           (u128(f.size()) < total ? ": truncated" : ": damaged");
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

double stored_element(const char* row, std::int64_t k, const BinaryHeader& h) {
  switch (h.element_bytes) {
    case 8: {
      double v;
      std::memcpy(&v, row + 8 * k, 8);
      return v;
    }
    case 4: {
      float v;
      std::memcpy(&v, row + 4 * k, 4);
      return v;
    }
    default: {
      std::uint16_t bits;
      std::memcpy(&bits, row + 2 * k, 2);
      return h.container[0] == 'b' ? precision::to_double(precision::bf16{bits})
                                   : precision::to_double(precision::fp16{bits});
    }
  }
}

bool file_stamp(const std::string& path, std::uint64_t& bytes, std::int64_t& mtime_ns) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return false;
  bytes = std::uint64_t(st.st_size);
  mtime_ns = std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return true;
}

}  // namespace minisgd
