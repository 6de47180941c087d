#pragma once
// The message schedule of an AllReduce whose reduction is a user merge (a low-precision sum,
// a compressed-domain sum, a top-k merge), for any number of ranks P.
//
// Let p2 be the largest power of two ≤ P. Fold-in: ranks p2..P-1 send their data to rank
// r − p2, which merges it, and get the result back at the end (fold-out). Among the p2 core
// ranks (virtual rank = rank):
//   elementwise  recursive-halving reduce-scatter, then recursive-doubling allgather: each
//                core rank sends 2(p2−1)/p2·n elements, every element is merged once per round;
//   whole        recursive doubling on the whole payload: log2 p2 rounds of n elements, both
//                partners compute the same merge (for merges that are not elementwise).
// The schedule is a pure function of (P, rank, n) so it can be executed over a communicator
// or simulated in one process.
#include <cstddef>
#include <vector>

namespace minisgd::comm {

enum class MergeShape { elementwise, whole };
enum class Phase { fold_in, reduce, gather, fold_out };

struct ElementRange {
  std::size_t begin = 0, end = 0;
  std::size_t size() const { return end - begin; }
};

/// One exchange with `peer`: send `send`, receive `recv`, then merge what arrived into the
/// own elements `recv` (fold_in, reduce) or copy it there (gather, fold_out).
struct PlanStep {
  Phase phase;
  int round;  // 0 for fold-in and fold-out, 1..log2 p2 for reduce and gather
  int peer;
  ElementRange send, recv;
  bool own_is_low;  // the own data belongs to the lower virtual rank: merge(own, received)
  /// Names this merge: equal on ranks that compute the same merge (whole shape), distinct
  /// for different merges of the same round, so merges can draw their own random bits.
  int merge_id;
  bool merges() const { return phase == Phase::fold_in || phase == Phase::reduce; }
};

struct MergePlan {
  int ranks = 1;
  int p2 = 1;
  std::vector<PlanStep> steps;
};

/// Largest power of two ≤ P.
int fold_in_size(int ranks);
/// ⌈log2 P⌉.
int ceil_log2(int ranks);

MergePlan make_merge_plan(int ranks, int rank, std::size_t count, MergeShape shape);

}  // namespace minisgd::comm
