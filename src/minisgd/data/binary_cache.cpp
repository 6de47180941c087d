#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "minisgd/core/errors.hpp"
#include "minisgd/data/raw_data.hpp"
#include "minisgd/core/atomic_file.hpp"

namespace minisgd {
namespace {

constexpr char kMagic[8] = {'M', 'S', 'G', 'D', 'B', 'I', 'N', '1'};

struct Header {
  char magic[8];
  std::int64_t rows;
  std::int64_t cols;
};

bool read_header(std::ifstream& in, Header& h) {
  in.read(reinterpret_cast<char*>(&h), sizeof h);
  return in && std::memcmp(h.magic, kMagic, 8) == 0 && h.rows > 0 && h.cols > 0;
}

}  // namespace

// Layout: header, labels[rows], then X row-major dense [rows][cols], all little-endian doubles.
void write_binary(const std::string& path, const RawData& d) {
  write_file_atomically(path, [&](std::ostream& out) {
    Header h{};
    std::memcpy(h.magic, kMagic, 8);
    h.rows = d.rows;
    h.cols = d.cols;
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    out.write(reinterpret_cast<const char*>(d.labels.data()), d.rows * sizeof(double));
    std::vector<double> row(d.cols);
    for (std::int64_t r = 0; r < d.rows; ++r) {
      std::fill(row.begin(), row.end(), 0.0);
      for (std::int64_t k = d.row_ptr[r]; k < d.row_ptr[r + 1]; ++k) row[d.col[k]] = d.val[k];
      out.write(reinterpret_cast<const char*>(row.data()), d.cols * sizeof(double));
    }
  });
}

RawData read_binary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open binary data file");
  Header h{};
  if (!read_header(in, h)) throw InputError(path + ": not a minisgd binary data file");
  RawData d;
  d.rows = h.rows;
  d.cols = h.cols;
  d.labels.resize(h.rows);
  in.read(reinterpret_cast<char*>(d.labels.data()), h.rows * sizeof(double));
  // Kept dense: CSR with every entry present.
  d.val.resize(static_cast<std::size_t>(h.rows * h.cols));
  in.read(reinterpret_cast<char*>(d.val.data()), d.val.size() * sizeof(double));
  if (!in) throw InputError(path + ": truncated binary data file");
  d.col.resize(d.val.size());
  d.row_ptr.resize(h.rows + 1);
  for (std::int64_t r = 0; r <= h.rows; ++r) d.row_ptr[r] = r * h.cols;
  for (std::size_t k = 0; k < d.col.size(); ++k) d.col[k] = static_cast<std::int64_t>(k % h.cols);
  d.line.assign(h.rows, 0);
  return d;
}

bool binary_is_fresh(const std::string& cache, const std::string& source) {
  struct stat sc {}, ss {};
  if (stat(cache.c_str(), &sc) != 0 || stat(source.c_str(), &ss) != 0) return false;
  if (sc.st_mtime < ss.st_mtime) return false;
  std::ifstream in(cache, std::ios::binary);
  Header h{};
  if (!read_header(in, h)) return false;
  const auto expect = static_cast<std::int64_t>(sizeof h) + h.rows * (h.cols + 1) * 8;
  return sc.st_size == expect;
}

}  // namespace minisgd
