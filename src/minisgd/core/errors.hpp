#pragma once
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace minisgd {

/// Process exit codes, documented in README.md ("Running").
enum ExitCode : int {
  kValid = 0,
  kInvalid = 1,
  kBadInput = 2,
  kRuntimeFailure = 3,
  kTimeLimit = 4  // solver.time_limit stopped the run before its last step (report written)
};

/// Bad deck, command line or data file: exit code 2. The message names the key or file:line.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The run itself failed (NaN/Inf loss, I/O failure while writing results): exit code 3.
struct RuntimeFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Thrown on every rank once an error has been agreed on and printed: carries only the code.
struct Abort {
  int code;
};

namespace detail {

/// Appends s with its control characters written as \n, \t or \xNN.
inline void append_escaped(std::string& out, std::string_view s) {
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f) {
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
}

/// n moved back to the start of the UTF-8 character it falls in (a cut never splits one).
inline std::size_t char_start(std::string_view s, std::size_t n) {
  while (n > 0 && n < s.size() && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return n;
}

}  // namespace detail

/// Input quoted in a message (a deck value, a data token): at most `max` bytes of it, then
/// "..." when it is longer (a value may be megabytes long), with control characters escaped so
/// that it stays on the line and cannot drive the terminal.
inline std::string quoted_input(std::string_view s, std::size_t max = 40) {
  std::string out;
  const bool cut = s.size() > max;
  detail::append_escaped(out, cut ? s.substr(0, detail::char_start(s, max)) : s);
  if (cut) out += "...";
  return out;
}

/// The most bytes of a message as printed; with "minisgd: error: " and a rank's note it stays
/// under 500 characters.
constexpr std::size_t kMaxMessageBytes = 400;

/// A message as printed: one line, control characters escaped, cut in the middle to
/// kMaxMessageBytes when longer (a long path or value: its head and its end stay readable).
inline std::string printable_message(std::string_view msg) {
  std::string line;
  detail::append_escaped(line, msg);
  if (line.size() <= kMaxMessageBytes) return line;
  const std::string_view v = line;
  const std::size_t head = detail::char_start(v, 300);
  std::size_t tail = v.size() - (kMaxMessageBytes - 300 - 3);
  while (tail < v.size() && (static_cast<unsigned char>(v[tail]) & 0xC0) == 0x80) ++tail;
  return std::string(v.substr(0, head)) + "..." + std::string(v.substr(tail));
}

}  // namespace minisgd
