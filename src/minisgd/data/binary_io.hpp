#pragma once
// Reading a binary data file, dense or CSR, in parallel (each rank reads whole checksum blocks,
// about 1/P of the file, and routes the rows to their owners) and writing one collectively
// (each rank writes the rows it parsed into a temporary file, then rank 0 adds the header and
// renames it into place: readers never see a partial file).
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

/// This rank's share of a binary file of either form (collective), stored as the deck's
/// data.layout asks: a CSR file into a dense or a sparse share, a dense file into a dense one.
/// UnusableFile names the file and, for a damaged block, the rows it holds; InputError a deck
/// key the file's shape or form does not fit.
template <class T>
Dataset<T> load_binary(const Config& c, const std::string& path, bool training,
                       std::int64_t features, comm::Communicator& comm, LoadStats& stats);

/// A binary file written collectively: it appears at its path only at commit().
template <class T>
class BinaryWriter {
 public:
  virtual ~BinaryWriter();
  BinaryWriter(const BinaryWriter&) = delete;
  BinaryWriter& operator=(const BinaryWriter&) = delete;
  /// Writes parsed rows (global rows first_row, first_row+1, ...), rounded into T by `store`.
  virtual void write(std::int64_t first_row, const ParsedRows& rows, const DataStore<T>& store) = 0;
  /// Collective: checksums, header, rename. Throws RuntimeFailure on every rank on failure.
  void commit(comm::Communicator& comm);

 protected:
  /// Collective: rank 0 creates the temporary file at its final size, `bytes`.
  BinaryWriter(const std::string& path, std::uint64_t bytes, comm::Communicator& comm);
  void put(const void* p, std::size_t n, std::uint64_t at);
  std::string path_, error_;

 private:
  /// The file's checksum blocks, and block b's checksum from what is now in the file.
  virtual std::uint64_t blocks() const = 0;
  virtual std::uint64_t block_sum(const InputFile& f, std::uint64_t b) const = 0;
  /// Rank 0: the table at its place, then the header sealed with the table's checksum.
  virtual void write_header(const std::vector<std::uint64_t>& table) = 0;
  /// Why this rank's part is not whole at commit ("" when it is).
  virtual std::string unfinished() const { return {}; }

  std::string temp_;
  int fd_ = -1;
};

/// Dense rows of T (BinaryHeader).
template <class T>
class DenseWriter final : public BinaryWriter<T> {
 public:
  DenseWriter(const std::string& path, BinaryHeader header, comm::Communicator& comm);
  void write(std::int64_t first_row, const ParsedRows& rows, const DataStore<T>& store) override;

 private:
  std::uint64_t blocks() const override { return layout_of(header_).blocks; }
  std::uint64_t block_sum(const InputFile& f, std::uint64_t b) const override;
  void write_header(const std::vector<std::uint64_t>& table) override;
  BinaryHeader header_;
  std::vector<T> row_;
};

/// Compressed sparse rows of T (CsrHeader). This rank's rows hold the file's entries
/// [first_entry, first_entry + entries): what the text's scan counted.
template <class T>
class CsrWriter final : public BinaryWriter<T> {
 public:
  CsrWriter(const std::string& path, CsrHeader header, std::int64_t first_entry,
            std::int64_t entries, comm::Communicator& comm);
  void write(std::int64_t first_row, const ParsedRows& rows, const DataStore<T>& store) override;

 private:
  std::uint64_t blocks() const override { return layout_of(header_).blocks; }
  std::uint64_t block_sum(const InputFile& f, std::uint64_t b) const override;
  void write_header(const std::vector<std::uint64_t>& table) override;
  std::string unfinished() const override;
  CsrHeader header_;
  std::int64_t next_entry_, end_entry_;
  std::vector<std::int64_t> offsets_;
  std::vector<std::int32_t> columns_;
  std::vector<T> values_;
};

}  // namespace minisgd
