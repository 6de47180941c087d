#pragma once
// What loading the data cost this rank, and the report's "data_load" section.
#include <cstdint>

#include <nlohmann/json_fwd.hpp>

#include "minisgd/comm/communicator.hpp"

namespace minisgd {

struct LoadStats {
  std::uint64_t bytes_read = 0;    // from data files, every pass
  double seconds = 0;              // the whole load: read, parse or generate, exchange
  double cpu_seconds = 0;          // CPU time of the process during the load (all threads)
  double parse_seconds = 0;        // parsing text (and routing the parsed rows)
  std::uint64_t parsed_bytes = 0;  // text bytes parsed
  std::uint64_t matrix_bytes = 0;  // this rank's X and y (training and test sets)
};

/// CPU time of this process so far (every thread), in seconds.
double process_cpu_seconds();

/// Peak resident memory of this process so far (VmHWM), in bytes; 0 where unknown.
std::uint64_t peak_resident_bytes();

/// Collective: the maximum over ranks of each figure, the parse rate of the slowest rank
/// and the peak resident memory of the largest rank, measured now.
nlohmann::json to_json(const LoadStats& s, comm::Communicator& comm);

}  // namespace minisgd
