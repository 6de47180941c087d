#include "minisgd/data/binary_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "minisgd/core/atomic_file.hpp"
#include "minisgd/core/errors.hpp"
#include "minisgd/data/row_router.hpp"
#include "minisgd/data/sparse_share.hpp"

namespace minisgd {

template <>
const char* container_name<double>() {
  return "fp64";
}
template <>
const char* container_name<float>() {
  return "fp32";
}
template <>
const char* container_name<precision::bf16>() {
  return "bf16";
}
template <>
const char* container_name<precision::fp16>() {
  return "fp16";
}

namespace {

/// Reads block b (labels and rows), checks it, and routes its rows; returns "" or why not.
template <class T>
std::string route_block(const Config& c, const InputFile& f, const BinaryHeader& h, std::uint64_t b,
                        std::uint64_t expected, std::vector<char>& buf, RowRouter<T>& router,
                        LoadStats& stats, bool& damaged) {
  const std::string why = read_block(f, h, b, expected, buf);
  stats.bytes_read += buf.size();
  damaged = !why.empty();
  if (damaged) return why;
  const std::int64_t r0 = std::int64_t(b) * h.block_rows;
  const std::int64_t n = std::min(h.block_rows, h.rows - r0);
  const char* labels = buf.data();
  const char* rows = buf.data() + 8 * n;
  const std::uint64_t row_bytes = layout_of(h).row_bytes;
  std::vector<std::int64_t> cols(static_cast<std::size_t>(h.features));
  std::vector<double> vals(static_cast<std::size_t>(h.features));
  for (std::int64_t j = 0; j < h.features; ++j) cols[std::size_t(j)] = j;
  for (std::int64_t i = 0; i < n; ++i) {
    double y, label;
    std::memcpy(&y, labels + 8 * i, 8);
    const std::string bad = checked_label(c.model.loss, y, label);
    if (!bad.empty()) return f.path() + ": row " + std::to_string(r0 + i + 1) + ": " + bad;
    const char* row = rows + std::size_t(i) * row_bytes;
    for (std::int64_t j = 0; j < h.features; ++j) vals[std::size_t(j)] = stored_element(row, j, h);
    router.add(r0 + i, label, cols.data(), vals.data(), h.features);
    if (router.overflow().col >= 0)
      return f.path() + ": row " + std::to_string(r0 + i + 1) + ": " +
             stored_value_problem(c, router.overflow().col, router.overflow().value);
  }
  return {};
}

/// agree_on_error, its error thrown as UnusableFile, damaged when any rank's `damaged` is.
void agree_file_unusable(comm::Communicator& comm, const std::string& error, bool damaged) {
  try {
    agree_on_error(comm, error);
  } catch (const InputError& e) {  // thrown on every rank: the allreduce is collective
    throw UnusableFile(e.what(), comm.allreduce_value(damaged ? 1 : 0, comm::Op::max) == 1);
  }
}

/// The file, its header and block table (collective: every rank agrees on an error).
template <class Header>
struct OpenedBinary {
  std::unique_ptr<InputFile> file;
  Header h{};
  std::vector<std::uint64_t> table;
};

template <class Header>
OpenedBinary<Header> open_binary(const std::string& path, std::int64_t features,
                                 comm::Communicator& comm, LoadStats& stats) {
  OpenedBinary<Header> b;
  std::string error;
  try {
    b.file = std::make_unique<InputFile>(path);
    error = read_header(*b.file, b.h);
    if (error.empty() && features > 0 && b.h.features != features)
      error = "has " + std::to_string(b.h.features) + " features, the model " +
              std::to_string(features);
    if (!error.empty()) error = path + ": " + error;
  } catch (const InputError& e) {
    error = e.what();
  }
  agree_file_unusable(comm, error, true);
  const std::uint64_t blocks = layout_of(b.h).blocks;
  b.table.resize(blocks);
  b.file->read_at(layout_of(b.h).table_at, b.table.data(), 8 * blocks);
  stats.bytes_read += sizeof(Header) + 8 * blocks;
  return b;
}

/// Calls f(b, damaged) for each of this rank's blocks, [B·r/P, B·(r+1)/P), then exchange(): as
/// many rounds on every rank, each agreeing on the errors f returns (collective; thrown as
/// UnusableFile, damaged as f says).
template <class F, class X>
void for_my_blocks(std::uint64_t blocks, comm::Communicator& comm, F&& f, X&& exchange) {
  const std::uint64_t P = std::uint64_t(comm.size()), me = std::uint64_t(comm.rank());
  const std::uint64_t first = blocks * me / P, last = blocks * (me + 1) / P;
  const std::uint64_t rounds = (blocks + P - 1) / P;  // the most blocks any rank reads
  for (std::uint64_t k = 0; k < rounds; ++k) {
    std::string error;
    bool damaged = false;
    try {
      if (first + k < last) error = f(first + k, damaged);
    } catch (const InputError& e) {
      error = e.what();
      damaged = true;
    }
    agree_file_unusable(comm, error, damaged);
    exchange();
  }
}

/// A share's partition, features and description from a file's header (the deck checks that
/// depend on the shape come after the file's own errors).
template <class T, class Header>
Dataset<T> shaped(const Config& c, const std::string& path, const Header& h, bool training,
                  comm::Communicator& comm) {
  Dataset<T> ds;
  const std::int64_t cols = h.features + (c.model.intercept ? 1 : 0);
  ds.part = make_partition(c, h.rows, cols, comm.rank(), comm.size(), training);
  ds.features = h.features;
  ds.description = path + " (" + std::to_string(h.rows) + " x " + std::to_string(h.features) +
                   ", " + h.format + ")";
  return ds;
}

template <class T>
Dataset<T> load_dense(const Config& c, const std::string& path, bool training,
                      std::int64_t features, comm::Communicator& comm, LoadStats& stats) {
  const OpenedBinary<BinaryHeader> in = open_binary<BinaryHeader>(path, features, comm, stats);
  const BinaryHeader& h = in.h;
  if (c.data.layout == Layout::sparse)
    throw InputError(path +
                     ": holds dense rows; data.layout: sparse reads a sparse binary file "
                     "(minisgd-convert --layout sparse) or the LIBSVM text");
  Dataset<T> ds = shaped<T>(c, path, h, training, comm);
  const std::int64_t cols = ds.part.cols;
  ensure_share_fits(ds.part, sizeof(T), path, comm);
  allocate_share(ds);
  RowRouter<T> router(ds, shuffled_positions(h.rows, c.run.seed, training && c.data.shuffle),
                      data_store<T>(c, cols), c.model.intercept);
  std::vector<char> buf;
  for_my_blocks(
      layout_of(h).blocks, comm,
      [&](std::uint64_t b, bool& damaged) {
        return route_block(c, *in.file, h, b, in.table[b], buf, router, stats, damaged);
      },
      [&] { router.exchange(comm); });
  router.finish();
  if (training) check_partition(c, ds.part);
  return ds;
}

/// Checks block b of a CSR file and routes its rows; returns "" or why not.
template <class T>
std::string route_csr_block(const Config& c, const InputFile& f, const CsrHeader& h,
                            const CsrBlock& block, RowRouter<T>& router) {
  std::vector<std::int64_t> cols;
  std::vector<double> vals;
  const std::int64_t e0 = block.offsets.front();
  for (std::int64_t i = 0; i < block.rows(); ++i) {
    double label;
    const std::string bad = checked_label(c.model.loss, block.labels[std::size_t(i)], label);
    if (!bad.empty()) return f.path() + ": row " + std::to_string(block.first + i + 1) + ": " + bad;
    cols.clear();
    vals.clear();
    for (auto e = block.offsets[std::size_t(i)]; e < block.offsets[std::size_t(i) + 1]; ++e) {
      cols.push_back(block.columns[std::size_t(e - e0)]);
      vals.push_back(stored_element(block.values.data(), e - e0, h.element_bytes, h.container));
    }
    router.add(block.first + i, label, cols.data(), vals.data(), std::int64_t(cols.size()));
    if (router.overflow().col >= 0)
      return f.path() + ": row " + std::to_string(block.first + i + 1) + ": " +
             stored_value_problem(c, router.overflow().col, router.overflow().value);
  }
  return {};
}

template <class T>
Dataset<T> load_csr(const Config& c, const std::string& path, bool training, std::int64_t features,
                    comm::Communicator& comm, LoadStats& stats) {
  const OpenedBinary<CsrHeader> in = open_binary<CsrHeader>(path, features, comm, stats);
  const CsrHeader& h = in.h;
  Dataset<T> ds = shaped<T>(c, path, h, training, comm);
  const std::int64_t cols = ds.part.cols;
  std::vector<std::int64_t> position =
      shuffled_positions(h.rows, c.run.seed, training && c.data.shuffle);
  const std::uint64_t blocks = layout_of(h).blocks;
  CsrBlock block;
  const auto read = [&](std::uint64_t b, bool& damaged) {
    const std::string why = read_block(*in.file, h, b, in.table[b], block);
    stats.bytes_read += block.bytes();
    damaged = !why.empty();
    return why;
  };
  if (stores_sparse(c, double(h.entries), h.rows, h.features)) {
    // A first pass counts each of this rank's rows' entries in every rank's column block, so
    // that the share is allocated once at its size; the second routes the rows into it.
    const std::vector<std::int64_t> bounds = count_blocks(ds.part);
    const std::size_t nb = bounds.size() - 1;
    std::size_t one = 0;  // the block of the intercept's column d
    while (one + 1 < nb && h.features >= bounds[one + 1]) ++one;
    std::vector<std::int32_t> counts;
    for_my_blocks(
        blocks, comm,
        [&](std::uint64_t b, bool& damaged) {
          std::string why = read(b, damaged);
          for (std::int64_t i = 0; why.empty() && i < block.rows(); ++i) {
            counts.resize(counts.size() + nb, 0);
            std::int32_t* row = counts.data() + counts.size() - nb;
            std::size_t k = 0;
            for (auto e = block.offsets[std::size_t(i)]; e < block.offsets[std::size_t(i) + 1];
                 ++e) {
              const std::int64_t j = block.columns[std::size_t(e - block.offsets.front())];
              while (k + 1 < nb && j >= bounds[k + 1]) ++k;
              ++row[k];
            }
            if (c.model.intercept) ++row[one];
          }
          return why;
        },
        [] {});
    const std::uint64_t P = std::uint64_t(comm.size()), me = std::uint64_t(comm.rank());
    const std::int64_t first_row = std::int64_t(blocks * me / P) * h.block_rows;
    allocate_sparse_share(ds, route_row_counts(ds.part, position, first_row, counts, comm), path,
                          comm);
    ds.description += ", sparse: " + std::to_string(h.entries) + " nonzeros";
  } else {
    ensure_share_fits(ds.part, sizeof(T), path, comm);
    allocate_share(ds);
  }
  RowRouter<T> router(ds, std::move(position), data_store<T>(c, cols), c.model.intercept);
  for_my_blocks(
      blocks, comm,
      [&](std::uint64_t b, bool& damaged) {
        std::string why = read(b, damaged);
        return why.empty() ? route_csr_block(c, *in.file, h, block, router) : why;
      },
      [&] { router.exchange(comm); });
  router.finish();
  if (training) check_partition(c, ds.part);
  return ds;
}

}  // namespace

template <class T>
Dataset<T> load_binary(const Config& c, const std::string& path, bool training,
                       std::int64_t features, comm::Communicator& comm, LoadStats& stats) {
  BinaryForm form = BinaryForm::unknown;
  try {  // (a file that cannot be opened is refused, by name, below)
    form = binary_form(InputFile(path));
  } catch (const InputError&) {
  }
  // Every rank reads the same bytes, but a rank that could not would take another path.
  if (comm.allreduce_value(form == BinaryForm::csr ? 1 : 0, comm::Op::min) == 1)
    return load_csr<T>(c, path, training, features, comm, stats);
  return load_dense<T>(c, path, training, features, comm, stats);
}

// ---- writing ---------------------------------------------------------------------------------

template <class T>
BinaryWriter<T>::BinaryWriter(const std::string& path, std::uint64_t bytes,
                              comm::Communicator& comm)
    : path_(path) {
  std::uint64_t id = std::uint64_t(getpid());
  comm.bcast(&id, 1, 0);
  temp_ = path + ".tmp." + std::to_string(id);
  register_temporary(temp_);  // a SIGTERM while the file is written removes it
  // The rename at commit() would turn a FIFO or device node at `path` into a regular file.
  // A reduction, not a broadcast: no rank goes on (and rank 0 creates the file) before every
  // rank has registered it, so a SIGTERM handled by any one rank removes it.
  const int replaceable = comm.allreduce_value(
      comm.rank() == 0 ? (replace_problem(path).empty() ? 1 : 0) : 1, comm::Op::min);
  if (!replaceable) {
    forget_temporary(temp_);
    throw RuntimeFailure(path + ": exists and is not a regular file; refusing to replace it");
  }
  int ok = 1;
  if (comm.rank() == 0) {
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ok = fd_ >= 0 && ::ftruncate(fd_, off_t(bytes)) == 0;
  }
  ok = comm.allreduce_value(ok, comm::Op::min);
  if (ok && comm.rank() != 0) fd_ = ::open(temp_.c_str(), O_WRONLY | O_CLOEXEC);
  ok = comm.allreduce_value(ok && fd_ >= 0 ? 1 : 0, comm::Op::min);
  if (!ok) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (comm.rank() == 0) std::remove(temp_.c_str());
    forget_temporary(temp_);
    throw RuntimeFailure(path + ": cannot write (" + std::strerror(errno) + ")");
  }
}

template <class T>
BinaryWriter<T>::~BinaryWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
    std::remove(temp_.c_str());  // not committed
  }
  forget_temporary(temp_);
}

template <class T>
void BinaryWriter<T>::put(const void* p, std::size_t n, std::uint64_t at) {
  if (error_.empty() && ::pwrite(fd_, p, n, off_t(at)) != ssize_t(n))
    error_ = path_ + ": write failed (" + std::strerror(errno) + ")";
}

template <class T>
void BinaryWriter<T>::commit(comm::Communicator& comm) {
  if (error_.empty()) error_ = unfinished();
  if (comm.allreduce_value(error_.empty() ? 0 : 1, comm::Op::max) == 0) {
    // Every rank checksums its share of the blocks from what is now in the file.
    std::vector<std::uint64_t> table(blocks(), 0);
    InputFile f(temp_);
    const std::uint64_t P = std::uint64_t(comm.size()), me = std::uint64_t(comm.rank());
    for (std::uint64_t b = table.size() * me / P; b < table.size() * (me + 1) / P; ++b)
      table[b] = block_sum(f, b);
    comm.allreduce(table.data(), table.size(), comm::Op::sum);  // each block from one rank
    if (comm.rank() == 0) {
      write_header(table);
      if (error_.empty() && ::fsync(fd_) != 0)
        error_ = path_ + ": write failed (" + std::strerror(errno) + ")";
    }
  }
  ::close(fd_);
  fd_ = -1;
  int failed = comm.allreduce_value(error_.empty() ? 0 : 1, comm::Op::max);
  if (!failed && comm.rank() == 0 && std::rename(temp_.c_str(), path_.c_str()) != 0) {
    error_ = path_ + ": cannot rename into place (" + std::strerror(errno) + ")";
    failed = 1;
  }
  failed = comm.allreduce_value(failed, comm::Op::max);
  if (failed) {
    if (comm.rank() == 0) std::remove(temp_.c_str());
    forget_temporary(temp_);
    throw RuntimeFailure(error_.empty() ? path_ + ": another rank failed to write" : error_);
  }
}

template <class T>
DenseWriter<T>::DenseWriter(const std::string& path, BinaryHeader header, comm::Communicator& comm)
    : BinaryWriter<T>(path, layout_of(header).total, comm),
      header_(header),
      row_(std::size_t(header.features)) {}

template <class T>
void DenseWriter<T>::write(std::int64_t first_row, const ParsedRows& rows,
                           const DataStore<T>& store) {
  const BinaryLayout l = layout_of(header_);
  if (rows.rows() > 0)
    this->put(rows.labels.data(), 8 * std::size_t(rows.rows()),
              l.labels_at + 8 * std::uint64_t(first_row));
  for (std::int64_t i = 0; i < rows.rows(); ++i) {
    const std::int64_t r = first_row + i;
    std::fill(row_.begin(), row_.end(), store(0.0, r, 0));
    for (auto k = rows.row_ptr[std::size_t(i)]; k < rows.row_ptr[std::size_t(i) + 1]; ++k)
      row_[std::size_t(rows.col[std::size_t(k)])] =
          store(rows.val[std::size_t(k)], r, rows.col[std::size_t(k)]);
    this->put(row_.data(), std::size_t(l.row_bytes), l.matrix_at + l.row_bytes * std::uint64_t(r));
  }
}

template <class T>
std::uint64_t DenseWriter<T>::block_sum(const InputFile& f, std::uint64_t b) const {
  const BinaryLayout l = layout_of(header_);
  const std::int64_t r0 = std::int64_t(b) * header_.block_rows;
  const std::int64_t n = std::min(header_.block_rows, header_.rows - r0);
  std::vector<char> buf(std::size_t(n) * (8 + l.row_bytes));
  f.read_at(l.labels_at + 8 * std::uint64_t(r0), buf.data(), 8 * std::size_t(n));
  f.read_at(l.matrix_at + l.row_bytes * std::uint64_t(r0), buf.data() + 8 * n,
            l.row_bytes * std::size_t(n));
  return checksum(buf.data() + 8 * n, l.row_bytes * std::size_t(n),
                  checksum(buf.data(), 8 * std::size_t(n)));
}

template <class T>
void DenseWriter<T>::write_header(const std::vector<std::uint64_t>& table) {
  header_.table_checksum = checksum(table.data(), 8 * table.size());
  header_.header_checksum = checksum(&header_, offsetof(BinaryHeader, header_checksum));
  this->put(table.data(), 8 * table.size(), layout_of(header_).table_at);
  this->put(&header_, sizeof header_, 0);
}

template <class T>
CsrWriter<T>::CsrWriter(const std::string& path, CsrHeader header, std::int64_t first_entry,
                        std::int64_t entries, comm::Communicator& comm)
    : BinaryWriter<T>(path, layout_of(header).total, comm),
      header_(header),
      next_entry_(first_entry),
      end_entry_(first_entry + entries) {
  if (comm.rank() == 0)  // the last offset, which no row's own offset is
    this->put(&header_.entries, 8, layout_of(header_).offsets_at + 8 * std::uint64_t(header_.rows));
}

template <class T>
void CsrWriter<T>::write(std::int64_t first_row, const ParsedRows& rows,
                         const DataStore<T>& store) {
  const std::int64_t n = rows.rows(), e0 = next_entry_;
  if (n == 0) return;
  offsets_.resize(std::size_t(n));
  columns_.resize(rows.col.size());
  values_.resize(rows.col.size());
  for (std::int64_t i = 0; i < n; ++i) {
    offsets_[std::size_t(i)] = e0 + rows.row_ptr[std::size_t(i)];
    for (auto k = rows.row_ptr[std::size_t(i)]; k < rows.row_ptr[std::size_t(i) + 1]; ++k) {
      columns_[std::size_t(k)] = std::int32_t(rows.col[std::size_t(k)]);
      values_[std::size_t(k)] =
          store(rows.val[std::size_t(k)], first_row + i, rows.col[std::size_t(k)]);
    }
  }
  next_entry_ += std::int64_t(rows.col.size());
  if (next_entry_ > end_entry_) return;  // unfinished() says so at commit
  const CsrLayout l = layout_of(header_);
  this->put(rows.labels.data(), 8 * std::size_t(n), l.labels_at + 8 * std::uint64_t(first_row));
  this->put(offsets_.data(), 8 * std::size_t(n), l.offsets_at + 8 * std::uint64_t(first_row));
  this->put(columns_.data(), 4 * columns_.size(), l.columns_at + 4 * std::uint64_t(e0));
  this->put(values_.data(), sizeof(T) * values_.size(),
            l.values_at + sizeof(T) * std::uint64_t(e0));
}

template <class T>
std::string CsrWriter<T>::unfinished() const {
  if (next_entry_ == end_entry_) return {};
  return this->path_ + ": the rows parsed hold " + std::to_string(next_entry_) +
         " entries where the scan counted " + std::to_string(end_entry_);
}

template <class T>
std::uint64_t CsrWriter<T>::block_sum(const InputFile& f, std::uint64_t b) const {
  CsrBlock block;
  read_block_bytes(f, header_, b, block);  // (a damaged block fails its reader's checks)
  return block_checksum(block);
}

template <class T>
void CsrWriter<T>::write_header(const std::vector<std::uint64_t>& table) {
  header_.table_checksum = checksum(table.data(), 8 * table.size());
  header_.header_checksum = checksum(&header_, offsetof(CsrHeader, header_checksum));
  this->put(table.data(), 8 * table.size(), layout_of(header_).table_at);
  this->put(&header_, sizeof header_, 0);
}

#define MINISGD_BINARY(T)                                                                   \
  template Dataset<T> load_binary<T>(const Config&, const std::string&, bool, std::int64_t, \
                                     comm::Communicator&, LoadStats&);                      \
  template class BinaryWriter<T>;                                                           \
  template class DenseWriter<T>;                                                            \
  template class CsrWriter<T>;
MINISGD_BINARY(double)
MINISGD_BINARY(float)
MINISGD_BINARY(precision::bf16)
MINISGD_BINARY(precision::fp16)
#undef MINISGD_BINARY

}  // namespace minisgd
