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

}  // namespace

template <class T>
Dataset<T> load_binary(const Config& c, const std::string& path, bool training,
                       std::int64_t features, comm::Communicator& comm, LoadStats& stats) {
  std::unique_ptr<InputFile> f;
  BinaryHeader h{};
  std::vector<std::uint64_t> table;
  std::string error;
  try {
    f = std::make_unique<InputFile>(path);
    error = read_header(*f, h);
    if (error.empty() && features > 0 && h.features != features)
      error =
          "has " + std::to_string(h.features) + " features, the model " + std::to_string(features);
    if (!error.empty()) error = path + ": " + error;
  } catch (const InputError& e) {
    error = e.what();
  }
  agree_file_unusable(comm, error, true);
  const BinaryLayout l = layout_of(h);
  table.resize(l.blocks);
  f->read_at(l.table_at, table.data(), 8 * l.blocks);
  stats.bytes_read += sizeof h + 8 * l.blocks;

  Dataset<T> ds;
  const std::int64_t cols = h.features + (c.model.intercept ? 1 : 0);
  // The deck checks that depend on the shape come after the file's own errors.
  ds.part = make_partition(c, h.rows, cols, comm.rank(), comm.size(), training);
  ds.features = h.features;
  ds.description = path + " (" + std::to_string(h.rows) + " x " + std::to_string(h.features) +
                   ", " + h.format + ")";
  ensure_share_fits(ds.part, sizeof(T), path, comm);
  allocate_share(ds);
  RowRouter<T> router(ds, shuffled_positions(h.rows, c.run.seed, training && c.data.shuffle),
                      data_store<T>(c, cols), c.model.intercept);
  const std::uint64_t P = std::uint64_t(comm.size()), me = std::uint64_t(comm.rank());
  const std::uint64_t first = l.blocks * me / P, last = l.blocks * (me + 1) / P;
  const std::uint64_t rounds = (l.blocks + P - 1) / P;  // the most blocks any rank reads
  std::vector<char> buf;
  for (std::uint64_t k = 0; k < rounds; ++k) {
    const std::uint64_t b = first + k;
    error.clear();
    bool damaged = false;
    try {
      if (b < last) error = route_block(c, *f, h, b, table[b], buf, router, stats, damaged);
    } catch (const InputError& e) {
      error = e.what();
      damaged = true;
    }
    agree_file_unusable(comm, error, damaged);
    router.exchange(comm);
  }
  router.finish();
  if (training) check_partition(c, ds.part);
  return ds;
}

template <class T>
BinaryWriter<T>::BinaryWriter(const std::string& path, BinaryHeader header,
                              comm::Communicator& comm)
    : path_(path), header_(header), row_(std::size_t(header.features)) {
  std::uint64_t id = std::uint64_t(getpid());
  comm.bcast(&id, 1, 0);
  temp_ = path + ".tmp." + std::to_string(id);
  register_temporary(temp_);  // a SIGTERM while the cache is written removes it
  const BinaryLayout l = layout_of(header_);
  // The rename at commit() would turn a FIFO or device node at `path` into a regular file.
  int replaceable = comm.rank() == 0 ? (replace_problem(path).empty() ? 1 : 0) : 1;
  comm.bcast(&replaceable, 1, 0);
  if (!replaceable) {
    forget_temporary(temp_);
    throw RuntimeFailure(path + ": exists and is not a regular file; refusing to replace it");
  }
  int ok = 1;
  if (comm.rank() == 0) {
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ok = fd_ >= 0 && ::ftruncate(fd_, off_t(l.total)) == 0;
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
void BinaryWriter<T>::write(std::int64_t first_row, const ParsedRows& rows,
                            const DataStore<T>& store) {
  const BinaryLayout l = layout_of(header_);
  const auto put = [&](const void* p, std::size_t n, std::uint64_t at) {
    if (error_.empty() && ::pwrite(fd_, p, n, off_t(at)) != ssize_t(n))
      error_ = path_ + ": write failed (" + std::strerror(errno) + ")";
  };
  if (rows.rows() > 0)
    put(rows.labels.data(), 8 * std::size_t(rows.rows()),
        l.labels_at + 8 * std::uint64_t(first_row));
  for (std::int64_t i = 0; i < rows.rows(); ++i) {
    const std::int64_t r = first_row + i;
    std::fill(row_.begin(), row_.end(), store(0.0, r, 0));
    for (auto k = rows.row_ptr[std::size_t(i)]; k < rows.row_ptr[std::size_t(i) + 1]; ++k)
      row_[std::size_t(rows.col[std::size_t(k)])] =
          store(rows.val[std::size_t(k)], r, rows.col[std::size_t(k)]);
    put(row_.data(), std::size_t(l.row_bytes), l.matrix_at + l.row_bytes * std::uint64_t(r));
  }
}

template <class T>
void BinaryWriter<T>::commit(comm::Communicator& comm) {
  if (comm.allreduce_value(error_.empty() ? 0 : 1, comm::Op::max) == 0) {
    // Every rank checksums its share of the blocks from what is now in the file.
    const BinaryLayout l = layout_of(header_);
    std::vector<std::uint64_t> table(l.blocks, 0);
    InputFile f(temp_);
    std::vector<char> buf;
    const std::uint64_t P = std::uint64_t(comm.size()), me = std::uint64_t(comm.rank());
    for (std::uint64_t b = l.blocks * me / P; b < l.blocks * (me + 1) / P; ++b) {
      const std::int64_t r0 = std::int64_t(b) * header_.block_rows;
      const std::int64_t n = std::min(header_.block_rows, header_.rows - r0);
      buf.resize(std::size_t(n) * (8 + l.row_bytes));
      f.read_at(l.labels_at + 8 * std::uint64_t(r0), buf.data(), 8 * std::size_t(n));
      f.read_at(l.matrix_at + l.row_bytes * std::uint64_t(r0), buf.data() + 8 * n,
                l.row_bytes * std::size_t(n));
      table[b] = checksum(buf.data() + 8 * n, l.row_bytes * std::size_t(n),
                          checksum(buf.data(), 8 * std::size_t(n)));
    }
    comm.allreduce(table.data(), table.size(), comm::Op::sum);  // each block from one rank
    if (comm.rank() == 0) {
      header_.table_checksum = checksum(table.data(), 8 * table.size());
      header_.header_checksum = checksum(&header_, offsetof(BinaryHeader, header_checksum));
      if (::pwrite(fd_, table.data(), 8 * table.size(), off_t(l.table_at)) !=
              ssize_t(8 * table.size()) ||
          ::pwrite(fd_, &header_, sizeof header_, 0) != ssize_t(sizeof header_) ||
          ::fsync(fd_) != 0)
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

#define MINISGD_BINARY(T)                                                                   \
  template Dataset<T> load_binary<T>(const Config&, const std::string&, bool, std::int64_t, \
                                     comm::Communicator&, LoadStats&);                      \
  template class BinaryWriter<T>;
MINISGD_BINARY(double)
MINISGD_BINARY(float)
MINISGD_BINARY(precision::bf16)
MINISGD_BINARY(precision::fp16)
#undef MINISGD_BINARY

}  // namespace minisgd
