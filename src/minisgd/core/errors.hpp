#pragma once
#include <stdexcept>
#include <string>

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

}  // namespace minisgd
