#include "minisgd/data/libsvm.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>

#include "minisgd/core/errors.hpp"
#include "minisgd/data/decimal.hpp"
#include "minisgd/data/raw_data.hpp"

namespace minisgd {
namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/// End of the data part of a line: the first '#' or the end.
const char* data_end(const char* begin, const char* end) {
  const void* hash = std::memchr(begin, '#', std::size_t(end - begin));
  return hash ? static_cast<const char*>(hash) : end;
}

/// A finite double that is a whole token (ends at blank, ':' excluded, or the end).
bool parse_number(const char*& p, const char* end, double& out) {
  // LIBSVM labels are often written "+1"; one sign only, as strtod reads it ("+-1" is no number).
  if (p < end && *p == '+' && !(p + 1 < end && p[1] == '-')) ++p;
  const auto r = std::from_chars(p, end, out);
  if (r.ec != std::errc() || r.ptr == p || (r.ptr < end && !blank(*r.ptr))) return false;
  p = r.ptr;
  return true;
}

/// The token at p, cut to a length a message can carry (a bad line may be megabytes long).
std::string token_at(const char* p, const char* end) {
  constexpr std::ptrdiff_t kMaxEcho = 40;
  const char* q = p;
  while (q < end && !blank(*q) && q - p <= kMaxEcho) ++q;
  return quoted_input(std::string_view(p, std::size_t(q - p)), kMaxEcho);
}

/// A finite number that ends at a blank, '#' or the end of the line; nullptr otherwise.
const char* finite_number(const char* p, const char* end, double& out) {
  const char* q = parse_simple_decimal(p, end, out);
  if (!q) {  // rare forms (more digits, large exponents): the general parser
    if (p < end && *p == '+' && !(p + 1 < end && p[1] == '-')) ++p;
    const auto r = std::from_chars(p, end, out);
    if (r.ec != std::errc() || r.ptr == p || !std::isfinite(out)) return nullptr;
    q = r.ptr;
  }
  return q == end || blank(*q) || *q == '#' ? q : nullptr;
}

/// The common line in one pass, with no allocation beyond the row's entries: numbers, indices
/// increasing within `features`, blanks between tokens, an optional comment without NUL bytes.
/// Returns false, having added nothing, at anything else: parse_line_carefully then reads the
/// line again and says what is wrong with it (or accepts a rare valid form).
bool parse_simple_line(const char* p, const char* end, std::int64_t features, std::int64_t line,
                       ParsedRows& out) {
  const auto skip_blanks = [&] {
    while (p < end && blank(*p)) ++p;
  };
  const auto at_data_end = [&] {  // the end of the line or a comment free of NUL bytes
    return p == end || (*p == '#' && !std::memchr(p, '\0', std::size_t(end - p)));
  };
  skip_blanks();
  if (p == end || *p == '#') return at_data_end();  // blank or comment-only
  double label = 0;
  if (!(p = finite_number(p, end, label))) return false;
  const std::size_t first = out.col.size();
  const std::int64_t limit = features > 0 ? features : std::int64_t(1) << 62;
  std::int64_t prev = 0;  // the last 1-based index
  for (;;) {
    skip_blanks();
    if (p == end || *p == '#') {
      if (at_data_end()) break;
      out.col.resize(first);
      out.val.resize(first);
      return false;
    }
    std::int64_t idx = 0;
    const char* digits = p;
    for (; p < end && static_cast<unsigned>(*p - '0') < 10 && p - digits < 18; ++p)
      idx = 10 * idx + (*p - '0');
    double v = 0;
    if (p == digits || p == end || *p != ':' || idx <= prev || idx > limit ||
        !(p = finite_number(p + 1, end, v))) {
      out.col.resize(first);
      out.val.resize(first);
      return false;
    }
    prev = idx;
    out.col.push_back(idx - 1);
    out.val.push_back(v);
  }
  out.labels.push_back(label);
  out.row_ptr.push_back(std::int64_t(out.col.size()));
  out.line.push_back(line);
  return true;
}

/// Any line, token by token, with the reason when it is refused.
std::string parse_line_carefully(const char* begin, const char* end, std::int64_t features,
                                 std::int64_t line, ParsedRows& out);

}  // namespace

void ParsedRows::clear() {
  labels.clear();
  row_ptr.assign(1, 0);
  col.clear();
  val.clear();
  line.clear();
}

bool line_has_row(const char* begin, const char* end) {
  while (begin < end && blank(*begin)) ++begin;
  return begin < end && *begin != '#';  // data before any comment
}

std::int64_t last_column_of_line(const char* begin, const char* end) {
  end = data_end(begin, end);
  const char* colon = end;
  while (colon > begin && *(colon - 1) != ':') --colon;
  if (colon == begin) return -1;
  const char* digits = colon - 1;
  while (digits > begin && *(digits - 1) >= '0' && *(digits - 1) <= '9') --digits;
  std::int64_t idx = 0;
  const auto r = std::from_chars(digits, colon - 1, idx);
  return r.ec == std::errc() ? idx - 1 : -1;
}

void count_line_entries(const char* begin, const char* end, const std::int64_t* bounds, int blocks,
                        std::int32_t* counts) {
  end = data_end(begin, end);
  int k = 0;
  for (const char* p = begin; p < end; ++p) {
    p = static_cast<const char*>(std::memchr(p, ':', std::size_t(end - p)));
    if (!p) break;
    if (blocks > 1) {
      const char* digits = p;
      while (digits > begin && static_cast<unsigned>(digits[-1] - '0') < 10) --digits;
      std::int64_t idx = 0;
      std::from_chars(digits, p, idx);
      while (k + 1 < blocks && idx - 1 >= bounds[k + 1]) ++k;  // indices increase along a line
    }
    ++counts[k];
  }
}

std::string parse_libsvm_line(const char* begin, const char* end, std::int64_t features,
                              std::int64_t line, ParsedRows& out) {
  if (parse_simple_line(begin, end, features, line, out)) return {};
  return parse_line_carefully(begin, end, features, line, out);
}

namespace {

std::string parse_line_carefully(const char* begin, const char* end, std::int64_t features,
                                 std::int64_t line, ParsedRows& out) {
  if (std::memchr(begin, '\0', std::size_t(end - begin)))
    return "NUL byte in a text data file (binary data?)";
  end = data_end(begin, end);
  const char* p = begin;
  while (p < end && blank(*p)) ++p;
  if (p == end) return {};  // blank or comment-only line

  double label = 0;
  const char* label_at = p;
  if (!parse_number(p, end, label)) return "expected a numeric label at the start of the line";
  if (!std::isfinite(label)) return "label " + token_at(label_at, end) + " is not a finite number";
  const std::size_t first = out.col.size();
  std::int64_t prev = -1;
  std::string beyond;  // the first index over `features`, reported at the end of the line
  for (;;) {
    while (p < end && blank(*p)) ++p;
    if (p == end) break;
    std::int64_t idx = 0;
    const auto r = std::from_chars(p, end, idx);
    if (r.ec == std::errc::result_out_of_range && r.ptr < end && *r.ptr == ':') {
      out.col.resize(first);
      out.val.resize(first);
      return "feature index " + token_at(p, r.ptr) + " is out of range (at most 2^63 - 1)";
    }
    if (r.ec != std::errc() || r.ptr == end || *r.ptr != ':') {
      out.col.resize(first);
      out.val.resize(first);
      return "expected index:value, got '" + token_at(p, end) + "'";
    }
    std::string why;
    if (idx < 1)
      why = "feature index " + std::to_string(idx) + " < 1";
    else if (idx - 1 <= prev)
      why = "feature indices must be strictly increasing";
    else if (features > 0 && idx > features && beyond.empty())
      // Not returned yet: when the count was inferred from each line's last index, an index
      // beyond it means a later index on this line is out of order, the real error.
      beyond = "feature index " + std::to_string(idx) +
               " exceeds data.features = " + std::to_string(features);
    const char* value_at = r.ptr + 1;
    p = value_at;
    double v = 0;
    if (why.empty() && !parse_number(p, end, v))
      why = "bad value for feature " + std::to_string(idx);
    if (why.empty() && !std::isfinite(v))
      why = "value " + token_at(value_at, end) + " of feature " + std::to_string(idx) +
            " is not a finite number";
    if (!why.empty()) {
      out.col.resize(first);
      out.val.resize(first);
      return why;
    }
    prev = idx - 1;
    out.col.push_back(prev);
    out.val.push_back(v);
  }
  if (!beyond.empty()) {
    out.col.resize(first);
    out.val.resize(first);
    return beyond;
  }
  out.labels.push_back(label);
  out.row_ptr.push_back(std::int64_t(out.col.size()));
  out.line.push_back(line);
  return {};
}

}  // namespace
}  // namespace minisgd

namespace minisgd {

RawData read_libsvm(const std::string& path, std::int64_t features) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open data file");
  ParsedRows rows;
  std::int64_t max_col = -1;
  std::string text;
  for (std::int64_t lineno = 1; std::getline(in, text); ++lineno) {
    const std::string why =
        parse_libsvm_line(text.data(), text.data() + text.size(), features, lineno, rows);
    if (!why.empty()) throw InputError(path + ":" + std::to_string(lineno) + ": " + why);
  }
  if (in.bad()) throw InputError(path + ": read error");
  for (const std::int64_t j : rows.col) max_col = std::max(max_col, j);
  RawData d;
  d.rows = rows.rows();
  if (d.rows == 0) throw InputError(path + ": no data rows");
  d.cols = features > 0 ? features : max_col + 1;
  if (d.cols < 1) throw InputError(path + ": no features (give data.features)");
  d.labels = std::move(rows.labels);
  d.row_ptr = std::move(rows.row_ptr);
  d.col = std::move(rows.col);
  d.val = std::move(rows.val);
  d.line = std::move(rows.line);
  return d;
}

}  // namespace minisgd
