#pragma once
#include <string>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/config/config.hpp"
#include "minisgd/data/dataset.hpp"
#include "minisgd/data/load_stats.hpp"

namespace minisgd {

/// Text read and parsed per step of the parallel reader (a line longer than this is read whole).
constexpr std::size_t kTextBlockBytes = std::size_t(16) << 20;

/// This rank's share of a LIBSVM file, read in parallel (collective): each rank scans and
/// parses one line-aligned byte range in bounded blocks and sends the rows to their owners.
/// `features` > 0 fixes d. Training data are shuffled with the run seed (data.shuffle).
/// `cache_path` non-empty: also writes a binary copy there (collectively; not an error when
/// it cannot be written).
template <class T>
Dataset<T> load_libsvm(const Config& c, const std::string& path, bool training,
                       std::int64_t features, comm::Communicator& comm, LoadStats& stats,
                       const std::string& cache_path = "",
                       std::size_t block_bytes = kTextBlockBytes);

/// Converts a LIBSVM file to a binary file (collective), values rounded to precision.data of
/// `c` and stored as T: CSR or dense rows as c.data.layout says (auto: by density). Returns the
/// number of rows.
template <class T>
std::int64_t convert_libsvm(const Config& c, const std::string& in, const std::string& out,
                            std::int64_t features, comm::Communicator& comm);

}  // namespace minisgd
