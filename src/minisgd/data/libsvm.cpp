#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "minisgd/core/errors.hpp"
#include "minisgd/data/raw_data.hpp"

namespace minisgd {
namespace {

[[noreturn]] void bad_line(const std::string& path, std::int64_t line, const std::string& what) {
  throw InputError(path + ":" + std::to_string(line) + ": " + what);
}

/// strtod that must consume a whole token ending at whitespace, ':' or end.
bool parse_double(const char*& p, double& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtod(p, &end);
  if (end == p || errno == ERANGE) return false;
  p = end;
  return true;
}

}  // namespace

RawData read_libsvm(const std::string& path, std::int64_t features) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open data file");
  RawData d;
  std::int64_t max_col = -1;
  std::string text;
  for (std::int64_t lineno = 1; std::getline(in, text); ++lineno) {
    const auto hash = text.find('#');
    if (hash != std::string::npos) text.resize(hash);
    const char* p = text.c_str();
    while (*p == ' ' || *p == '\t' || *p == '\r') ++p;
    if (*p == '\0') continue;  // blank or comment-only line

    double label = 0;
    if (!parse_double(p, label) || !(*p == '\0' || std::isspace(static_cast<unsigned char>(*p))))
      bad_line(path, lineno, "expected a numeric label at the start of the line");
    std::int64_t prev = -1;
    for (;;) {
      while (*p == ' ' || *p == '\t' || *p == '\r') ++p;
      if (*p == '\0') break;
      char* end = nullptr;
      errno = 0;
      const long long idx = std::strtoll(p, &end, 10);
      if (end == p || *end != ':')
        bad_line(path, lineno, std::string("expected index:value, got '") +
                                   std::string(p, std::strcspn(p, " \t\r")) + "'");
      if (idx < 1) bad_line(path, lineno, "feature index " + std::to_string(idx) + " < 1");
      if (features > 0 && idx > features)
        bad_line(path, lineno, "feature index " + std::to_string(idx) +
                                   " exceeds data.features = " + std::to_string(features));
      if (idx - 1 <= prev) bad_line(path, lineno, "feature indices must be strictly increasing");
      p = end + 1;
      double v = 0;
      if (!parse_double(p, v) || !(*p == '\0' || std::isspace(static_cast<unsigned char>(*p))))
        bad_line(path, lineno, "bad value for feature " + std::to_string(idx));
      prev = idx - 1;
      d.col.push_back(prev);
      d.val.push_back(v);
    }
    if (prev > max_col) max_col = prev;
    d.labels.push_back(label);
    d.row_ptr.push_back(static_cast<std::int64_t>(d.col.size()));
    d.line.push_back(lineno);
  }
  if (in.bad()) throw InputError(path + ": read error");
  d.rows = static_cast<std::int64_t>(d.labels.size());
  if (d.rows == 0) throw InputError(path + ": no data rows");
  d.cols = features > 0 ? features : max_col + 1;
  if (d.cols < 1) throw InputError(path + ": no features (give data.features)");
  return d;
}

}  // namespace minisgd
