#pragma once
// The binary data format (docs/data.md): a header with a version, the shape, the element
// type and checksums; a table with one checksum per block of rows; the labels as doubles;
// the matrix row-major in the storage element type (fp64, fp32, bf16 or fp16 containers,
// holding values already rounded to the deck's precision.data format). Rows are in file
// order; a reader reads whole blocks, so that each rank reads about 1/P of the file.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "minisgd/data/line_blocks.hpp"

namespace minisgd {

struct BinaryHeader {
  char magic[8];          // "MSGDBIN\0"
  std::uint32_t version;  // kBinaryVersion
  std::uint32_t element_bytes;
  char container[8];  // fp64 | fp32 | bf16 | fp16: how an element is stored
  char format[24];    // the precision.data format the values are rounded to
  std::int64_t rows;
  std::int64_t features;          // columns stored (no intercept)
  std::int64_t block_rows;        // rows per checksum block
  std::uint64_t source_bytes;     // size of the text file it came from (0: none recorded)
  std::int64_t source_mtime_ns;   // its modification time
  std::uint64_t table_checksum;   // of the block table
  std::uint64_t header_checksum;  // of every field above
};

constexpr std::uint32_t kBinaryVersion = 2;

/// A 64-bit checksum of n bytes, continuing from `seed` (not cryptographic: it detects
/// damage and truncation, not tampering).
std::uint64_t checksum(const void* data, std::size_t n, std::uint64_t seed = 0);

/// Byte layout of a file with this header.
struct BinaryLayout {
  std::uint64_t blocks, table_at, labels_at, matrix_at, row_bytes, total;
};
BinaryLayout layout_of(const BinaryHeader& h);

/// A header for rows × features elements of `container`, rounded to `format`.
BinaryHeader make_header(std::int64_t rows, std::int64_t features, const std::string& container,
                         std::size_t element_bytes, const std::string& format);

/// Reads and checks the header (magic, version, checksum, element type, the size the shape
/// implies against the file's, computed without overflow before anything is sized by it, a
/// block size a reader can buffer) and the block table's checksum. Returns "" or why the
/// file cannot be used.
std::string read_header(const InputFile& f, BinaryHeader& h);

/// The most bytes (labels and rows) of a block with more than one row: a reader buffers one.
constexpr std::uint64_t kMaxBlockBytes = std::uint64_t(64) << 20;

/// Reads block b (labels, then rows: 8 + row_bytes per row) of a file whose header passed
/// read_header into `buf` and checks it against its table checksum `expected`. Returns ""
/// or why not, naming the rows.
std::string read_block(const InputFile& f, const BinaryHeader& h, std::uint64_t b,
                       std::uint64_t expected, std::vector<char>& buf);

/// Element k of a stored row, as a double (the container is one read_header accepted).
double stored_element(const char* row, std::int64_t k, const BinaryHeader& h);

/// Size and modification time (ns) of a file, for the staleness of a cache.
bool file_stamp(const std::string& path, std::uint64_t& bytes, std::int64_t& mtime_ns);

}  // namespace minisgd
