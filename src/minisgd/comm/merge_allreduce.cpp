#include "minisgd/comm/merge_allreduce.hpp"

#include <vector>

namespace minisgd::comm {

void run_plan(Communicator& comm, const MergePlan& plan, std::uint8_t* data, std::size_t elem_bytes,
              const MergeFn& merge, Phase first, Phase last) {
  std::vector<std::uint8_t> received;
  for (const PlanStep& s : plan.steps) {
    if (s.phase < first || s.phase > last) continue;
    std::uint8_t* own = data + s.recv.begin * elem_bytes;
    // A merge needs the own elements intact until it runs; a copy lands in place.
    std::uint8_t* target = own;
    if (s.merges()) {
      received.resize(s.recv.size() * elem_bytes);
      target = received.data();
    }
    comm.sendrecv(data + s.send.begin * elem_bytes, s.send.size() * elem_bytes, s.peer, target,
                  s.recv.size() * elem_bytes, s.peer, DType::u8);
    if (s.merges() && s.recv.size() > 0)
      merge(own, received.data(), s.recv.begin, s.recv.size(), s);
  }
}

void merge_allreduce(Communicator& comm, MergeShape shape, std::uint8_t* data, std::size_t count,
                     std::size_t elem_bytes, const MergeFn& merge) {
  if (comm.size() == 1) return;
  run_plan(comm, make_merge_plan(comm.size(), comm.rank(), count, shape), data, elem_bytes, merge);
}

}  // namespace minisgd::comm
