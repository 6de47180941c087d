#pragma once
// A parsed data file in global (unshuffled) row order, before it is partitioned.
#include <cstdint>
#include <string>
#include <vector>

namespace minisgd {

/// Sparse rows in CSR form, as a LIBSVM file holds them (0-based column indices).
struct RawData {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<double> labels;
  std::vector<std::int64_t> row_ptr{0};
  std::vector<std::int64_t> col;
  std::vector<double> val;
  std::vector<std::int64_t> line;  // file line of each row, for label errors
};

/// Parses a LIBSVM text file. `features` > 0 fixes d (an index above it is an error);
/// 0 infers d from the largest index. Errors are InputError "file:line: what".
RawData read_libsvm(const std::string& path, std::int64_t features);

/// Binary cache of a parsed file: dense row-major doubles, reused by later runs.
void write_binary(const std::string& path, const RawData& data);
RawData read_binary(const std::string& path);
/// True when `cache` exists, is a valid cache and is newer than `source`.
bool binary_is_fresh(const std::string& cache, const std::string& source);

}  // namespace minisgd
