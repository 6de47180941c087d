#include "minisgd/comm/merge_plan.hpp"

#include <stdexcept>

namespace minisgd::comm {

int fold_in_size(int ranks) {
  if (ranks < 1) throw std::invalid_argument("fold_in_size: need at least one rank");
  int p2 = 1;
  while (p2 * 2 <= ranks) p2 *= 2;
  return p2;
}

int ceil_log2(int ranks) {
  int k = 0;
  while ((1 << k) < ranks) ++k;
  return k;
}

MergePlan make_merge_plan(int ranks, int rank, std::size_t count, MergeShape shape) {
  MergePlan plan;
  plan.ranks = ranks;
  plan.p2 = fold_in_size(ranks);
  const int p2 = plan.p2;
  const ElementRange all{0, count}, none{0, 0};
  auto& steps = plan.steps;

  if (rank >= p2) {  // an extra rank: hand the data to its partner, get the result back
    const int partner = rank - p2;
    steps.push_back({Phase::fold_in, 0, partner, all, none, false, partner});
    steps.push_back({Phase::fold_out, 0, partner, none, all, false, partner});
    return plan;
  }
  const int v = rank;
  const bool serves_extra = v + p2 < ranks;
  if (serves_extra) steps.push_back({Phase::fold_in, 0, v + p2, none, all, true, v});

  if (shape == MergeShape::whole) {
    // Low bits first: after round r the ranks sharing v >> r hold the same data.
    for (int r = 1; (1 << (r - 1)) < p2; ++r) {
      const int peer = v ^ (1 << (r - 1));
      steps.push_back({Phase::reduce, r, peer, all, all, v < peer, v >> r});
    }
  } else {
    // Recursive halving, high bits first: partners share a segment, each keeps one half.
    std::vector<PlanStep> halving;
    ElementRange seg = all;
    int r = 1;
    for (int m = p2 / 2; m >= 1; m /= 2, ++r) {
      const int peer = v ^ m;
      const std::size_t mid = seg.begin + seg.size() / 2;
      const ElementRange lower{seg.begin, mid}, upper{mid, seg.end};
      const bool keep_upper = (v & m) != 0;
      const ElementRange keep = keep_upper ? upper : lower, give = keep_upper ? lower : upper;
      halving.push_back({Phase::reduce, r, peer, give, keep, v < peer, v});
      seg = keep;
    }
    steps.insert(steps.end(), halving.begin(), halving.end());
    // Recursive doubling allgather in reverse: send what I own, receive the partner's half.
    for (auto it = halving.rbegin(); it != halving.rend(); ++it)
      steps.push_back({Phase::gather, it->round, it->peer, it->recv, it->send, it->own_is_low, v});
  }
  if (serves_extra) steps.push_back({Phase::fold_out, 0, v + p2, all, none, true, v});
  return plan;
}

}  // namespace minisgd::comm
