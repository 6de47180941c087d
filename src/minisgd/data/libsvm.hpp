#pragma once
// One line of a LIBSVM text file: "label index:value index:value ... # comment", indices
// 1-based and strictly increasing. Numbers are parsed with std::from_chars (correctly
// rounded, so the same doubles as strtod); non-finite values, NUL bytes and anything that is
// not a number where one belongs are refused.
#include <cstdint>
#include <string>
#include <vector>

namespace minisgd {

/// Rows parsed from a run of lines: CSR with 0-based column indices.
struct ParsedRows {
  std::vector<double> labels;
  std::vector<std::int64_t> row_ptr{0};
  std::vector<std::int64_t> col;
  std::vector<double> val;
  std::vector<std::int64_t> line;  // line number of each row (1-based, within the file)

  std::int64_t rows() const { return std::int64_t(labels.size()); }
  void clear();
};

/// Parses [begin, end) (one line, without its newline) into `out`; a blank or comment-only
/// line adds nothing. `features` > 0 bounds the indices. Returns "" or the reason the line is
/// refused (the caller adds file:line).
std::string parse_libsvm_line(const char* begin, const char* end, std::int64_t features,
                              std::int64_t line, ParsedRows& out);

/// The largest 0-based column index on a line (-1 when none or blank): a quick look at the
/// last index, which is the largest when the line is well formed.
std::int64_t last_column_of_line(const char* begin, const char* end);

/// Counts a line's entries (its index:value pairs) by the block of the ranks' column blocks
/// each index falls in: counts[k] grows for a 0-based index in [bounds[k], bounds[k+1]), for k
/// < blocks (one block: no index is read). A quick look at the colons, which counts a well-formed
/// line exactly; the parse that follows refuses any other line.
void count_line_entries(const char* begin, const char* end, const std::int64_t* bounds, int blocks,
                        std::int32_t* counts);

/// True when a line holds a row (not blank, not comment-only).
bool line_has_row(const char* begin, const char* end);

}  // namespace minisgd
