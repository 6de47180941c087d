#include "minisgd/data/load_stats.hpp"

#include <ctime>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace minisgd {

std::uint64_t peak_resident_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

nlohmann::json to_json(const LoadStats& s, comm::Communicator& comm) {
  const auto max_u64 = [&](std::uint64_t v) { return comm.allreduce_value(v, comm::Op::max); };
  const double rate = s.parse_seconds > 0 ? double(s.parsed_bytes) / s.parse_seconds : 0.0;
  // The slowest parsing rank (ranks that parsed nothing do not count).
  const double slowest = comm.allreduce_value(rate > 0 ? rate : 1e300, comm::Op::min);
  return {{"bytes_read_per_rank", max_u64(s.bytes_read)},
          {"load_s", comm.allreduce_value(s.seconds, comm::Op::max)},
          {"load_cpu_s", comm.allreduce_value(s.cpu_seconds, comm::Op::max)},
          {"parse_MBps_per_rank",
           slowest < 1e300 ? nlohmann::json(slowest / 1e6) : nlohmann::json(nullptr)},
          {"matrix_bytes_per_rank", max_u64(s.matrix_bytes)},
          {"peak_rss_bytes_per_rank", max_u64(peak_resident_bytes())}};
}

}  // namespace minisgd
