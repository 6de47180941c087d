#pragma once
// The message schedule of an AllReduce whose reduction is a user merge (a low-precision sum,
// a compressed-domain sum, a top-k merge), for any number of ranks P. Two schedules:
//
//   halving         Let p2 be the largest power of two ≤ P. Fold-in: ranks p2..P-1 send their
//                   data to rank r − p2, which merges it, and get the result back at the end
//                   (fold-out). Among the p2 core ranks:
//                     elementwise  recursive-halving reduce-scatter, then recursive-doubling
//                                  allgather: each core rank sends 2(p2−1)/p2·n elements;
//                     whole        recursive doubling on the whole payload: log2 p2 rounds of
//                                  n elements, both partners compute the same merge (for merges
//                                  that are not elementwise, e.g. a top-k merge).
//                   At P = 2^k optimal in latency and bandwidth; otherwise a rank serving a
//                   folded-in one sends n more, and an extra rank waits two messages longer.
//   shifted_trees   (elementwise only) The payload is cut into P chunks; chunk c is reduced to
//                   rank c over a binomial tree whose ranks are numbered relative to c
//                   (q = r − c mod P), then broadcast back over the same tree. In round k of the
//                   reduction every relative rank q ≡ 2^k (mod 2^(k+1)) sends its partial sum to
//                   q − 2^k: for rank r that is one message to r − 2^k carrying every chunk for
//                   which it is such a q. So ⌈log2 P⌉ messages each way, 2(P−1)/P·n elements sent
//                   per rank, at any P, and every merge tree is balanced (depth ⌈log2 P⌉), which
//                   keeps the range bounds of merges that round (exponential dithering).
//
// choose_schedule picks by the α-β cost of the two. A schedule is a pure function of
// (P, rank, n), so it can be executed over a communicator or simulated in one process.
#include <cstddef>
#include <vector>

namespace minisgd::comm {

enum class MergeShape { elementwise, whole };
enum class MergeSchedule { halving, shifted_trees };
enum class Phase { fold_in, reduce, gather, fold_out };

struct ElementRange {
  std::size_t begin = 0, end = 0;
  std::size_t size() const { return end - begin; }
  bool operator==(const ElementRange& o) const { return begin == o.begin && end == o.end; }
};

/// A message: these ranges of the payload, back to back, in this order.
using Ranges = std::vector<ElementRange>;
std::size_t element_count(const Ranges& ranges);

/// One exchange: send `send` to rank `to`, receive `recv` from rank `from`, then merge what
/// arrived into the own elements of each range of `recv` (fold_in, reduce) or copy it there
/// (gather, fold_out).
struct PlanStep {
  Phase phase;
  int round;  // 0 for fold-in and fold-out, 1..(rounds of the phase) for reduce and gather
  int stage;  // the steps of all ranks with the same stage are simultaneous messages
  int to, from;
  Ranges send, recv;
  bool own_is_low;  // the own data belongs to the lower (relative) rank: merge(own, received)
  /// Names this merge: equal on ranks that compute the same merge (whole shape), distinct
  /// for different merges of the same round, so merges can draw their own random bits
  /// (together with the element index, when one step merges several ranges).
  int merge_id;
  bool merges() const { return phase == Phase::fold_in || phase == Phase::reduce; }
};

struct MergePlan {
  int ranks = 1;
  int p2 = 1;
  MergeSchedule schedule = MergeSchedule::halving;
  std::vector<PlanStep> steps;
};

/// Largest power of two ≤ P.
int fold_in_size(int ranks);
/// ⌈log2 P⌉.
int ceil_log2(int ranks);

/// Latency and bandwidth of the network a schedule is costed on.
struct LinkCost {
  double alpha_s = 5e-6;            // per message
  double seconds_per_byte = 1e-10;  // 10 GB/s
};

/// A schedule's critical path in the α-β model: the messages and bytes on it, and their
/// latency (messages·α) and bandwidth (bytes·β) parts; and the received elements merged into
/// the own ones on it (every stage's busiest rank), the merge's arithmetic.
struct ScheduleTime {
  double messages = 0, bytes = 0, merged = 0;
  double latency_s = 0, bandwidth_s = 0;
  double total_s() const { return latency_s + bandwidth_s; }
};

/// The critical path of a schedule for `count` elements of `elem_bytes` per rank at P ranks.
ScheduleTime schedule_time(MergeSchedule schedule, MergeShape shape, int ranks, double count,
                           double elem_bytes, const LinkCost& link);

/// The cheaper schedule for this merge (a whole merge is always halving; at P = 2^k the two
/// cost the same and halving, which sends contiguous halves, is kept).
MergeSchedule choose_schedule(MergeShape shape, int ranks, std::size_t count,
                              std::size_t elem_bytes, const LinkCost& link = {});

MergePlan make_merge_plan(int ranks, int rank, std::size_t count, MergeShape shape,
                          MergeSchedule schedule = MergeSchedule::halving);

}  // namespace minisgd::comm
