#pragma once
// Reading a binary data file in parallel (each rank reads whole checksum blocks, about 1/P
// of the file, and routes the rows to their owners) and writing one collectively (each rank
// writes the rows it parsed into a temporary file, then rank 0 adds the header and renames
// it into place: readers never see a partial file).
#include <cstdint>
#include <string>
#include <vector>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/config/config.hpp"
#include "minisgd/core/errors.hpp"
#include "minisgd/data/binary_format.hpp"
#include "minisgd/data/dataset.hpp"
#include "minisgd/data/libsvm.hpp"
#include "minisgd/data/load_stats.hpp"
#include "minisgd/data/share.hpp"

namespace minisgd {

/// A binary file whose content cannot stand for the data: `damaged` (unreadable, truncated,
/// a checksum mismatch) or values this run refuses (labels for another loss, a value its
/// storage cannot hold). A data cache is rebuilt from its text file on this error only, never
/// on the deck's own errors, which are thrown as InputError and printed once.
struct UnusableFile : InputError {
  UnusableFile(const std::string& what, bool damaged_) : InputError(what), damaged(damaged_) {}
  bool damaged;
};

/// The container name of a storage type: fp64, fp32, bf16, fp16.
template <class T>
const char* container_name();

/// This rank's share of a binary file (collective). UnusableFile names the file and, for a
/// damaged block, the rows it holds; InputError a deck key the file's shape does not fit.
template <class T>
Dataset<T> load_binary(const Config& c, const std::string& path, bool training,
                       std::int64_t features, comm::Communicator& comm, LoadStats& stats);

template <class T>
class BinaryWriter {
 public:
  /// Collective. `header` has the shape; the file appears at `path` only at commit().
  BinaryWriter(const std::string& path, BinaryHeader header, comm::Communicator& comm);
  ~BinaryWriter();
  /// Writes parsed rows (global rows first_row, first_row+1, ...) as dense rows of T.
  void write(std::int64_t first_row, const ParsedRows& rows, const DataStore<T>& store);
  /// Collective: checksums, header, rename. Throws RuntimeFailure on every rank on failure.
  void commit(comm::Communicator& comm);

 private:
  std::string path_, temp_;
  BinaryHeader header_;
  int fd_ = -1;
  std::string error_;
  std::vector<T> row_;
};

}  // namespace minisgd
