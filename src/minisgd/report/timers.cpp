#include "minisgd/report/timers.hpp"

#include <vector>

#include <nlohmann/json.hpp>

namespace minisgd {

double Timers::seconds(std::string_view phase) const {
  const auto it = seconds_.find(phase);
  return it == seconds_.end() ? 0.0 : it->second;
}

nlohmann::json Timers::summary(comm::Communicator& comm) const {
  const std::size_t n = seconds_.size();
  std::vector<double> mn, mx, sum;
  for (const auto& [phase, s] : seconds_) {
    mn.push_back(s);
    mx.push_back(s);
    sum.push_back(s);
  }
  comm.allreduce(mn.data(), n, comm::Op::min);
  comm.allreduce(mx.data(), n, comm::Op::max);
  comm.allreduce(sum.data(), n, comm::Op::sum);
  nlohmann::json out = nlohmann::json::object();
  std::size_t i = 0;
  for (const auto& kv : seconds_) {
    out[kv.first] = {{"min", mn[i]}, {"mean", sum[i] / comm.size()}, {"max", mx[i]}};
    ++i;
  }
  return out;
}

}  // namespace minisgd
