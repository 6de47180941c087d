#pragma once
#include <functional>
#include <ostream>
#include <string>

namespace minisgd {

/// Writes `path` through a temporary file in the same directory and renames it into place,
/// so a reader never sees a half-written file. Creates missing parent directories. Refuses a
/// `path` that exists and is not a regular file (a device node, a FIFO, a directory): the
/// rename would replace it. Throws RuntimeFailure when the file cannot be written.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& body);

/// Why a temporary renamed onto `path` would destroy something: "" when `path` is absent or a
/// regular file, else "PATH: exists and is not a regular file; refusing to replace it".
std::string replace_problem(const std::string& path);

/// Checks at set-up, before any training, that `path` can be written as write_file_atomically
/// will write it (a regular file or none, in a directory that takes a new file). "" when it
/// can, else why not.
std::string output_path_problem(const std::string& path);

/// Temporary files that a SIGTERM or SIGINT must not leave behind: the handler installed by
/// remove_temporaries_on_signal unlinks every registered one and exits with 128 + the signal
/// number (143 for SIGTERM, 130 for SIGINT).
void register_temporary(const std::string& path);
void forget_temporary(const std::string& path);
void remove_temporaries_on_signal();

}  // namespace minisgd
