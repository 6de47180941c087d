// Parallel LIBSVM reading. Pass 1 scans each rank's byte range for its line and row counts
// and its largest index, so that every rank knows the global line and row number of its
// first line and the shape; pass 2 parses the range block by block and routes each block's
// rows to their owners before reading the next, so that no rank ever holds more than its
// share and one block's rows.
#include "minisgd/data/text_loader.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "minisgd/core/errors.hpp"
#include "minisgd/data/binary_io.hpp"
#include "minisgd/data/feature_hash.hpp"
#include "minisgd/data/libsvm.hpp"
#include "minisgd/data/line_blocks.hpp"
#include "minisgd/data/row_router.hpp"
#include "minisgd/data/share.hpp"
#include "minisgd/data/sparse_share.hpp"

namespace minisgd {
namespace {

struct RangeCounts {
  std::int64_t lines = 0, rows = 0, max_col = -1, entries = 0;
};

/// Calls f(begin, end) for each line of [b, e) (a last line without its newline included).
template <class F>
void for_each_line(const char* b, const char* e, F&& f) {
  while (b < e) {
    const char* nl = static_cast<const char*>(std::memchr(b, '\n', std::size_t(e - b)));
    const char* line_end = nl ? nl : e;
    f(b, line_end);
    b = nl ? nl + 1 : e;
  }
}

/// Counts the lines and rows of the range, and its largest index when `features` is not given.
RangeCounts scan(const InputFile& f, ByteRange range, std::int64_t features, LoadStats& stats) {
  RangeCounts n;
  LineBlocks blocks(f, range, kTextBlockBytes);
  const char *b, *e;
  while (blocks.next(&b, &e))
    for_each_line(b, e, [&](const char* lb, const char* le) {
      ++n.lines;
      if (!line_has_row(lb, le)) return;
      ++n.rows;
      std::int32_t entries = 0;
      count_line_entries(lb, le, nullptr, 1, &entries);
      n.entries += entries;
      if (features <= 0) n.max_col = std::max(n.max_col, last_column_of_line(lb, le));
    });
  stats.bytes_read += blocks.bytes_read();
  return n;
}

/// Where this rank's range starts in the file: lines and rows before it, and the totals.
struct Placement {
  std::int64_t first_line = 1, first_row = 0, first_entry = 0, rows = 0, max_col = -1, entries = 0;
  std::int64_t my_entries = 0;  // in this rank's range
};

Placement place(const RangeCounts& mine, comm::Communicator& comm) {
  std::vector<std::int64_t> all(3 * std::size_t(comm.size()));
  const std::int64_t counts[3] = {mine.lines, mine.rows, mine.entries};
  comm.allgather(counts, all.data(), 3);
  Placement p;
  for (int r = 0; r < comm.size(); ++r) {
    const std::int64_t* n = all.data() + 3 * std::size_t(r);
    if (r < comm.rank()) {
      p.first_line += n[0];
      p.first_row += n[1];
      p.first_entry += n[2];
    }
    p.rows += n[1];
    p.entries += n[2];
  }
  p.my_entries = mine.entries;
  p.max_col = comm.allreduce_value(mine.max_col, comm::Op::max);
  return p;
}

/// The first line of each logistic label form seen: -1 and 0 both mean the negative class, so
/// a file holding both (and +1) has three classes, not two.
struct LabelForms {
  std::int64_t first_minus_one = std::numeric_limits<std::int64_t>::max();
  std::int64_t first_zero = std::numeric_limits<std::int64_t>::max();
  void see(double y, std::int64_t line) {
    if (y == -1.0) first_minus_one = std::min(first_minus_one, line);
    if (y == 0.0) first_zero = std::min(first_zero, line);
  }
};

/// Parses one block into `rows`, checks labels and stored values, routes the rows; returns "" or
/// "file:line: why".
template <class T>
std::string parse_block(const Config& c, const std::string& path, const char* b, const char* e,
                        std::int64_t cols, std::int64_t& line, std::int64_t& row, ParsedRows& rows,
                        const DataStore<T>& store, RowRouter<T>* router, LabelForms& forms) {
  std::string error;
  rows.clear();
  const int bits = c.data.hash_bits;  // hashed indices have no bound before hashing
  for_each_line(b, e, [&](const char* lb, const char* le) {
    if (!error.empty()) return;
    const std::string why = parse_libsvm_line(lb, le, bits ? 0 : cols, line, rows);
    if (!why.empty()) error = path + ":" + std::to_string(line) + ": " + why;
    ++line;
  });
  if (bits && error.empty()) hash_rows(rows, 0, bits);
  for (std::int64_t k = 0; k < rows.rows() && error.empty(); ++k, ++row) {
    double label = 0;
    const std::string why = checked_label(c.model.loss, rows.labels[std::size_t(k)], label);
    if (!why.empty()) {
      error = path + ":" + std::to_string(rows.line[std::size_t(k)]) + ": " + why;
      break;
    }
    if (c.model.loss == Loss::logistic)
      forms.see(rows.labels[std::size_t(k)], rows.line[std::size_t(k)]);
    const std::size_t at = std::size_t(rows.row_ptr[std::size_t(k)]);
    const std::int64_t n = rows.row_ptr[std::size_t(k) + 1] - rows.row_ptr[std::size_t(k)];
    typename RowRouter<T>::Overflow bad;
    if (router) {
      router->add(row, label, rows.col.data() + at, rows.val.data() + at, n);
      bad = router->overflow();
    } else {  // converting: no router stores the values, check them here
      for (std::size_t j = at; j < at + std::size_t(n) && bad.col < 0; ++j)
        if (!std::isfinite(precision::to_double(store(rows.val[j], row, rows.col[j]))))
          bad = {rows.col[j], rows.val[j]};
    }
    if (bad.col >= 0) {
      error = path + ":" + std::to_string(rows.line[std::size_t(k)]) + ": " +
              stored_value_problem(c, bad.col, bad.value);
      break;
    }
  }
  return error;
}

/// The file, this rank's range and where it sits in the file (pass 1, collective).
struct ScannedText {
  std::unique_ptr<InputFile> file;
  ByteRange range;
  Placement at;
  std::int64_t features = 0;
};

ScannedText scan_text(const std::string& path, std::int64_t features, comm::Communicator& comm,
                      LoadStats& stats) {
  ScannedText t;
  RangeCounts counts;
  std::string error;
  try {
    t.file = std::make_unique<InputFile>(path);
    t.range = line_aligned_range(*t.file, comm.rank(), comm.size());
    counts = scan(*t.file, t.range, features, stats);
  } catch (const InputError& e) {
    error = e.what();
  }
  agree_on_error(comm, error);
  t.at = place(counts, comm);
  if (t.at.rows == 0) throw InputError(path + ": no data rows");
  t.features = features > 0 ? features : t.at.max_col + 1;
  if (t.features < 1) throw InputError(path + ": no features (give data.features)");
  return t;
}

/// Pass 1b of a sparse share: the entry count of each row of this rank's range in every rank's
/// column block (count_blocks), the intercept's column included; row-major.
std::vector<std::int32_t> count_row_entries(const ScannedText& t, const Partition& p,
                                            std::int64_t features, bool intercept, int hash_bits,
                                            LoadStats& stats) {
  const std::vector<std::int64_t> bounds = count_blocks(p);
  const int blocks = int(bounds.size()) - 1;
  int one = 0;  // the block of the intercept's column d
  while (one + 1 < blocks && features >= bounds[std::size_t(one) + 1]) ++one;
  std::vector<std::int32_t> counts;
  ParsedRows hashed;
  LineBlocks lines(*t.file, t.range, kTextBlockBytes);
  const char *b, *e;
  while (lines.next(&b, &e))
    for_each_line(b, e, [&](const char* lb, const char* le) {
      if (!line_has_row(lb, le)) return;
      counts.resize(counts.size() + std::size_t(blocks), 0);
      std::int32_t* row = counts.data() + counts.size() - std::size_t(blocks);
      if (hash_bits) {  // the hashed row's distinct columns: parse it and hash it
        hashed.clear();
        if (parse_libsvm_line(lb, le, 0, 0, hashed).empty() && hashed.rows() == 1) {
          hash_rows(hashed, 0, hash_bits);
          int k = 0;
          for (const std::int64_t col : hashed.col) {
            while (k + 1 < blocks && col >= bounds[std::size_t(k) + 1]) ++k;
            ++row[k];
          }
        }
      } else {
        count_line_entries(lb, le, bounds.data(), blocks, row);
      }
      if (intercept) ++row[one];
    });
  stats.bytes_read += lines.bytes_read();
  return counts;
}

/// A writer of a binary copy of the text file (with the stamp of `source` when given): CSR when
/// `sparse`, else dense rows.
template <class T>
std::unique_ptr<BinaryWriter<T>> binary_copy(const Config& c, const ScannedText& t, bool sparse,
                                             const std::string& path, const std::string& source,
                                             comm::Communicator& comm) {
  const std::string format = precision::to_string(c.precision.plan[precision::Knob::data]);
  const SourceStamp from = source.empty() ? SourceStamp{} : source_stamp(source);
  const auto stamp = [&](auto& h) {
    h.source_bytes = from.bytes;
    h.source_mtime_ns = from.mtime_ns;
    h.source_sample = from.sample;
    return h;
  };
  if (sparse) {
    if (t.features >= (std::int64_t(1) << 31))
      throw InputError(path + ": " + std::to_string(t.features) +
                       " features: a sparse binary file holds 32-bit columns");
    CsrHeader h = make_csr_header(t.at.rows, t.features, t.at.entries, container_name<T>(),
                                  sizeof(T), format);
    return std::make_unique<CsrWriter<T>>(path, stamp(h), t.at.first_entry, t.at.my_entries, comm);
  }
  BinaryHeader h = make_header(t.at.rows, t.features, container_name<T>(), sizeof(T), format);
  return std::make_unique<DenseWriter<T>>(path, stamp(h), comm);
}

/// Pass 2: parses the range block by block; each block's rows go to the router and the
/// cache (either may be null) before the next block is read. Collective.
template <class T>
void parse_text(const Config& c, const std::string& path, const ScannedText& t,
                const DataStore<T>& store, RowRouter<T>* router, BinaryWriter<T>* cache,
                comm::Communicator& comm, LoadStats& stats, std::size_t block_bytes) {
  LineBlocks blocks(*t.file, t.range, block_bytes);
  ParsedRows rows;
  LabelForms forms;
  std::int64_t line = t.at.first_line, row = t.at.first_row;
  for (bool more = true; more;) {
    const char *b = nullptr, *e = nullptr;
    const bool mine = blocks.next(&b, &e);
    if (!mine) rows.clear();
    const auto t0 = std::chrono::steady_clock::now();
    const std::int64_t first = row;
    const std::string error =
        mine ? parse_block(c, path, b, e, t.features, line, row, rows, store, router, forms)
             : std::string();
    stats.parse_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    agree_on_error(comm, error);
    if (cache) cache->write(first, rows, store);
    if (router) router->exchange(comm);
    more = comm.allreduce_value(mine ? 1 : 0, comm::Op::max) == 1;
  }
  stats.parsed_bytes += blocks.bytes_read();
  stats.bytes_read += blocks.bytes_read();
  const std::int64_t minus_one = comm.allreduce_value(forms.first_minus_one, comm::Op::min);
  const std::int64_t zero = comm.allreduce_value(forms.first_zero, comm::Op::min);
  if (std::max(minus_one, zero) < std::numeric_limits<std::int64_t>::max())
    throw InputError(path + ":" + std::to_string(std::max(minus_one, zero)) + ": logistic label " +
                     (zero > minus_one ? "0" : "-1") + " after " + (zero > minus_one ? "-1" : "0") +
                     " on line " + std::to_string(std::min(minus_one, zero)) +
                     ": the labels take three values; logistic labels are ±1 or 0/1");
}

}  // namespace

template <class T>
Dataset<T> load_libsvm(const Config& c, const std::string& path, bool training,
                       std::int64_t features, comm::Communicator& comm, LoadStats& stats,
                       const std::string& cache_path, std::size_t block_bytes) {
  if (c.data.hash_bits > 0) features = std::int64_t(1) << c.data.hash_bits;
  const ScannedText t = scan_text(path, features, comm, stats);
  Dataset<T> ds;
  const std::int64_t cols = t.features + (c.model.intercept ? 1 : 0);
  // The deck checks that depend on the shape come after the file's own errors.
  ds.part = make_partition(c, t.at.rows, cols, comm.rank(), comm.size(), training);
  ds.features = t.features;
  ds.description =
      path + " (" + std::to_string(t.at.rows) + " x " + std::to_string(t.features) + ")";
  std::vector<std::int64_t> position =
      shuffled_positions(t.at.rows, c.run.seed, training && c.data.shuffle);
  const bool sparse = stores_sparse(c, double(t.at.entries), t.at.rows, t.features);
  if (sparse) {
    const std::vector<std::int64_t> counts = route_row_counts(
        ds.part, position, t.at.first_row,
        count_row_entries(t, ds.part, t.features, c.model.intercept, c.data.hash_bits, stats),
        comm);
    allocate_sparse_share(ds, counts, path, comm);
    ds.description += ", sparse: " + std::to_string(t.at.entries) + " nonzeros";
  } else {
    ensure_share_fits(ds.part, sizeof(T), path, comm);
    allocate_share(ds);
  }
  const DataStore<T> store = data_store<T>(c, cols);
  RowRouter<T> router(ds, std::move(position), store, c.model.intercept);
  std::unique_ptr<BinaryWriter<T>> cache;
  if (!cache_path.empty()) {
    // CSR where this run stores the data sparse or where auto would: the same cache then
    // serves a run that stores the data dense (CA-SGD from 1% to 10%, standardizing), and a
    // dense cache is dense data.
    const bool csr =
        sparse || stores_sparse(Layout::automatic, double(t.at.entries), t.at.rows, t.features);
    try {  // a cache that cannot be written (read-only data directory) is not an error
      cache = binary_copy<T>(c, t, csr, cache_path, path, comm);
    } catch (const RuntimeFailure&) {
    } catch (const InputError&) {  // (alike on every rank: the shape)
    }
  }
  parse_text(c, path, t, store, &router, cache.get(), comm, stats, block_bytes);
  router.finish();
  if (training) check_partition(c, ds.part);
  if (cache) {
    try {
      cache->commit(comm);
    } catch (const RuntimeFailure&) {
    }
  }
  return ds;
}

template <class T>
std::int64_t convert_libsvm(const Config& c, const std::string& in, const std::string& out,
                            std::int64_t features, comm::Communicator& comm) {
  LoadStats stats;
  const ScannedText t = scan_text(in, features, comm, stats);
  const bool csr = stores_sparse(c.data.layout, double(t.at.entries), t.at.rows, t.features);
  const std::unique_ptr<BinaryWriter<T>> writer = binary_copy<T>(c, t, csr, out, "", comm);
  parse_text<T>(c, in, t, data_store<T>(c, t.features), nullptr, writer.get(), comm, stats,
                kTextBlockBytes);
  writer->commit(comm);
  return t.at.rows;
}

#define MINISGD_TEXT(T)                                                                          \
  template Dataset<T> load_libsvm<T>(const Config&, const std::string&, bool, std::int64_t,      \
                                     comm::Communicator&, LoadStats&, const std::string&,        \
                                     std::size_t);                                               \
  template std::int64_t convert_libsvm<T>(const Config&, const std::string&, const std::string&, \
                                          std::int64_t, comm::Communicator&);
MINISGD_TEXT(double)
MINISGD_TEXT(float)
MINISGD_TEXT(precision::bf16)
MINISGD_TEXT(precision::fp16)
#undef MINISGD_TEXT

}  // namespace minisgd
