#include "minisgd/comm/merge_allreduce.hpp"

#include <cstring>
#include <vector>

namespace minisgd::comm {

void run_plan(Communicator& comm, const MergePlan& plan, std::uint8_t* data, std::size_t elem_bytes,
              const MergeFn& merge, Phase first, Phase last) {
  std::vector<std::uint8_t> outgoing, received;
  for (const PlanStep& s : plan.steps) {
    if (s.phase < first || s.phase > last) continue;
    const std::size_t send_n = element_count(s.send), recv_n = element_count(s.recv);
    // One contiguous range is sent from where it lies; several are packed back to back.
    const std::uint8_t* send = s.send.empty() ? data : data + s.send[0].begin * elem_bytes;
    if (s.send.size() > 1) {
      outgoing.resize(send_n * elem_bytes);
      std::size_t at = 0;
      for (const ElementRange& r : s.send) {
        std::memcpy(outgoing.data() + at, data + r.begin * elem_bytes, r.size() * elem_bytes);
        at += r.size() * elem_bytes;
      }
      send = outgoing.data();
    }
    // A merge needs the own elements intact until it runs; a single copied range lands in place.
    const bool in_place = !s.merges() && s.recv.size() == 1;
    if (!in_place) received.resize(recv_n * elem_bytes);
    std::uint8_t* target = in_place ? data + s.recv[0].begin * elem_bytes : received.data();
    comm.sendrecv(send, send_n * elem_bytes, s.to, target, recv_n * elem_bytes, s.from, DType::u8);
    if (in_place) continue;
    std::size_t at = 0;
    for (const ElementRange& r : s.recv) {
      std::uint8_t* own = data + r.begin * elem_bytes;
      if (r.size() > 0 && s.merges())
        merge(own, received.data() + at, r.begin, r.size(), s);
      else if (r.size() > 0)
        std::memcpy(own, received.data() + at, r.size() * elem_bytes);
      at += r.size() * elem_bytes;
    }
  }
}

void merge_allreduce(Communicator& comm, MergeShape shape, std::uint8_t* data, std::size_t count,
                     std::size_t elem_bytes, const MergeFn& merge) {
  if (comm.size() == 1) return;
  const MergeSchedule schedule = choose_schedule(shape, comm.size(), count, elem_bytes);
  run_plan(comm, make_merge_plan(comm.size(), comm.rank(), count, shape, schedule), data,
           elem_bytes, merge);
}

}  // namespace minisgd::comm
