#include "minisgd/data/share.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "minisgd/core/errors.hpp"

namespace minisgd {

Partition make_partition(const Config& c, std::int64_t rows, std::int64_t cols, int rank, int ranks,
                         bool training) {
  // Row decomposition: rank r holds ⌈(b − r)/P⌉ rows of every batch (partition.hpp).
  return {c.solver.decomposition, rank, ranks, rows, cols, training ? c.solver.batch_size : 0};
}

void check_partition(const Config& c, const Partition& p) {
  const std::int64_t b = c.solver.batch_size;
  if (b > p.rows)
    throw InputError("solver.batch_size: " + std::to_string(b) + " exceeds the " +
                     std::to_string(p.rows) + " training rows");
  if (p.decomposition == Decomposition::column && p.cols < p.ranks)
    throw InputError("solver.decomposition: column needs at least one column per rank (" +
                     std::to_string(p.cols) + " columns, " + std::to_string(p.ranks) + " ranks)");
}

std::string checked_label(Loss loss, double y, double& out) {
  switch (loss) {
    case Loss::logistic:
      if (y == 1.0) {
        out = 1.0;
        return {};
      }
      if (y == -1.0 || y == 0.0) {
        out = -1.0;
        return {};
      }
      return "logistic labels must be ±1 or 0/1, got " + std::to_string(y);
    case Loss::poisson:
      if (!(y >= 0.0)) return "Poisson labels must be ≥ 0, got " + std::to_string(y);
      out = y;
      return {};
    case Loss::linear: out = y; return {};
  }
  out = y;
  return {};
}

std::string stored_value_problem(const Config& c, std::int64_t col, double value) {
  std::ostringstream v;
  v << value;
  const std::string where = c.data.hash_bits > 0 ? " of hashed column " + std::to_string(col)
                                                 : " of feature " + std::to_string(col + 1);
  if (!std::isfinite(value)) return "value " + v.str() + where + " is not a finite number";
  return "value " + v.str() + where + " overflows " +
         precision::to_string(c.precision.plan[precision::Knob::data]) +
         " storage (precision.data)";
}

std::uint64_t share_bytes(const Partition& p, std::size_t element_bytes) {
  Partition first = p;
  first.rank = 0;  // rank 0 holds the largest share in both decompositions
  const long double bytes = (long double)(first.local_rows()) * first.local_cols() * element_bytes +
                            (long double)(first.local_rows()) * sizeof(double);
  return bytes >= (long double)(std::numeric_limits<std::uint64_t>::max())
             ? std::numeric_limits<std::uint64_t>::max()
             : std::uint64_t(bytes);
}

namespace {

/// MemAvailable of /proc/meminfo, or "unlimited" where there is none.
std::uint64_t available_bytes() {
  // Tests of the memory checks set the node's memory low rather than allocate what it lacks.
  if (const char* forced = std::getenv("MINISGD_MEM_AVAILABLE"))
    return std::strtoull(forced, nullptr, 10);
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return std::numeric_limits<std::uint64_t>::max();
}

/// How many ranks of `comm` run on this host (they share its memory).
std::uint64_t ranks_on_this_host(comm::Communicator& comm) {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a of the host name
  for (const char* p = name; *p; ++p) h = (h ^ std::uint8_t(*p)) * 1099511628211ull;
  std::vector<std::uint64_t> all(comm.size());
  comm.allgather(&h, all.data(), 1);
  return std::uint64_t(std::count(all.begin(), all.end(), h));
}

}  // namespace

void ensure_share_fits(const Partition& p, std::size_t element_bytes, const std::string& what,
                       comm::Communicator& comm) {
  const std::uint64_t need = share_bytes(p, element_bytes);
  const std::uint64_t have = available_bytes();
  const long double node_need = (long double)(need)*ranks_on_this_host(comm);
  const int short_of_memory = node_need > (long double)(have) ? 1 : 0;
  if (comm.allreduce_value(short_of_memory, comm::Op::max) == 0) return;
  std::ostringstream s;
  s << what << ": " << p.rows << " x " << p.cols << " needs " << need << " bytes per rank ("
    << p.ranks << " rank(s), " << element_bytes << "-byte values), more than the " << have
    << " bytes available on a node (MemAvailable, shared by the node's ranks)";
  throw InputError(s.str());
}

void ensure_fits(long double bytes_per_rank, const std::string& what, comm::Communicator& comm) {
  const std::uint64_t have = available_bytes();
  const int short_of_memory =
      bytes_per_rank * (long double)(ranks_on_this_host(comm)) > (long double)(have) ? 1 : 0;
  if (comm.allreduce_value(short_of_memory, comm::Op::max) == 0) return;
  std::ostringstream s;
  s.precision(3);
  s << what << ": needs " << double(bytes_per_rank) << " bytes per rank, more than the " << have
    << " bytes available on a node (MemAvailable, shared by the node's ranks)";
  throw InputError(s.str());
}

void agree_on_error(comm::Communicator& comm, const std::string& error) {
  if (comm.allreduce_value(error.empty() ? 0 : 1, comm::Op::max) == 0) return;
  const int first = comm.allreduce_value(error.empty() ? comm.size() : comm.rank(), comm::Op::min);
  std::uint64_t n = comm.rank() == first ? error.size() : 0;
  comm.bcast(&n, 1, first);
  std::string msg = comm.rank() == first ? error : std::string(n, ' ');
  comm.bcast(msg.data(), n, comm::DType::u8, first);
  throw InputError(msg);
}

}  // namespace minisgd
