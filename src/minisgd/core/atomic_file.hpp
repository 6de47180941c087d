#pragma once
#include <functional>
#include <ostream>
#include <string>

namespace minisgd {

/// Writes `path` through a temporary file in the same directory and renames it into place,
/// so a reader never sees a half-written file. Creates missing parent directories.
/// Throws RuntimeFailure when the file cannot be written.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& body);

}  // namespace minisgd
