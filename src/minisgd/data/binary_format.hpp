#pragma once
// The binary data formats (docs/data.md), dense and CSR: a header with a version, the shape,
// the element type and checksums; a table with one checksum per block of rows; the labels as
// doubles; then the matrix in the storage element type (fp64, fp32, bf16 or fp16 containers,
// holding values already rounded to the deck's precision.data format): dense rows, or the row
// offsets, 32-bit columns and values of compressed sparse rows. Rows are in file order; a
// reader reads whole blocks, so that each rank reads about 1/P of the file.
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
  std::uint64_t source_sample;    // its sampled_xxh64
  std::uint64_t table_checksum;   // of the block table
  std::uint64_t header_checksum;  // of every field above
};

constexpr std::uint32_t kBinaryVersion = 3;

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

/// A binary file in compressed sparse rows: the dense format's fields, the number of stored
/// entries, and its own magic and version.
struct CsrHeader {
  char magic[8];          // "MSGDCSR\0"
  std::uint32_t version;  // kCsrVersion
  std::uint32_t element_bytes;
  char container[8];
  char format[24];
  std::int64_t rows;
  std::int64_t features;  // columns (no intercept), below 2^31: columns are 32-bit
  std::int64_t entries;   // stored (index, value) pairs
  std::int64_t block_rows;
  std::uint64_t source_bytes;
  std::int64_t source_mtime_ns;
  std::uint64_t source_sample;
  std::uint64_t table_checksum;
  std::uint64_t header_checksum;
};

constexpr std::uint32_t kCsrVersion = 2;

/// Byte layout of a CSR file: header, block table, labels (rows × f64), row offsets
/// ((rows + 1) × i64, global: offsets[0] = 0, offsets[rows] = entries), columns (entries × i32),
/// values (entries elements).
struct CsrLayout {
  std::uint64_t blocks, table_at, labels_at, offsets_at, columns_at, values_at, total;
};
CsrLayout layout_of(const CsrHeader& h);

CsrHeader make_csr_header(std::int64_t rows, std::int64_t features, std::int64_t entries,
                          const std::string& container, std::size_t element_bytes,
                          const std::string& format);

/// Which format a file holds, by its magic: dense (MSGDBIN), csr (MSGDCSR) or neither.
enum class BinaryForm { dense, csr, unknown };
BinaryForm binary_form(const InputFile& f);

/// As read_header, for a CSR file.
std::string read_header(const InputFile& f, CsrHeader& h);

/// One block of a CSR file, read and checked: rows [first, first + rows()) with their labels,
/// offsets (global, offsets.size() = rows() + 1), columns and values (elements in the file's
/// container: stored_element).
struct CsrBlock {
  std::int64_t first = 0;
  std::vector<double> labels;
  std::vector<std::int64_t> offsets;
  std::vector<std::int32_t> columns;
  std::vector<char> values;
  std::int64_t rows() const { return std::int64_t(labels.size()); }
  std::uint64_t bytes() const {
    return 8 * labels.size() + 8 * offsets.size() + 4 * columns.size() + values.size();
  }
};

/// Reads block b into `out` and checks its offsets before they size the reads of its columns
/// and values (increasing, within the file's entries, one buffer of at most kMaxBlockBytes when
/// the block has more than one row). Returns "" or why not, naming the rows.
std::string read_block_bytes(const InputFile& f, const CsrHeader& h, std::uint64_t b,
                             CsrBlock& out);

/// read_block_bytes, then checks (increasing, within the file's entries), its size (one
/// buffer of at most kMaxBlockBytes when it has more than one row), its checksum `expected` and
/// its columns (strictly increasing in a row, below features). Returns "" or why not, naming
/// the rows.
std::string read_block(const InputFile& f, const CsrHeader& h, std::uint64_t b,
                       std::uint64_t expected, CsrBlock& out);

/// A CSR block's checksum: of its labels, offsets, columns and values, in that order.
std::uint64_t block_checksum(const CsrBlock& block);

/// Element k of a block of values in the container of a header (dense or CSR).
double stored_element(const char* values, std::int64_t k, std::uint32_t element_bytes,
                      const char* container);

/// What a cache records of the text file it is made from, and what must still hold for the
/// cache to stand for it: size, modification time (ns) and sampled_xxh64 of the content.
struct SourceStamp {
  std::uint64_t bytes = 0;
  std::int64_t mtime_ns = 0;
  std::uint64_t sample = 0;
};

/// The stamp of the regular file at `path` (InputError when it cannot be opened).
SourceStamp source_stamp(const std::string& path);

}  // namespace minisgd
