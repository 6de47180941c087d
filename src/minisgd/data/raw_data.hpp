#pragma once
// A whole LIBSVM file parsed by one process, in file order: for tools and tests that want
// the file as it is (the loader never builds this; it reads its share in parallel).
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
  std::vector<std::int64_t> line;  // file line of each row
};

/// Parses a LIBSVM text file. `features` > 0 fixes d (an index above it is an error);
/// 0 infers d from the largest index. Errors are InputError "file:line: what".
RawData read_libsvm(const std::string& path, std::int64_t features);

}  // namespace minisgd
