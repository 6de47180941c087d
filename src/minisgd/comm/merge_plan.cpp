#include "minisgd/comm/merge_plan.hpp"

#include <stdexcept>

namespace minisgd::comm {

std::size_t element_count(const Ranges& ranges) {
  std::size_t n = 0;
  for (const ElementRange& r : ranges) n += r.size();
  return n;
}

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

ScheduleTime schedule_time(MergeSchedule schedule, MergeShape shape, int ranks, double count,
                           double elem_bytes, const LinkCost& link) {
  ScheduleTime t;
  if (ranks <= 1) return t;
  const double P = ranks, rounds = ceil_log2(ranks), n = count;
  const double p2 = fold_in_size(ranks), core_rounds = ceil_log2(int(p2));
  const double fold = ranks > p2 ? 1 : 0;  // halving's fold-in and fold-out: n elements each
  if (schedule == MergeSchedule::shifted_trees) {
    // round k merges the chunks whose relative rank is ≡ 2^k (mod 2^(k+1)): P − 1 in all
    t.messages = 2 * rounds;
    t.bytes = 2 * (P - 1) / P * n * elem_bytes;
    t.merged = (P - 1) / P * n;
  } else if (shape == MergeShape::whole) {
    t.messages = 2 * fold + core_rounds;
    t.bytes = (2 * fold + core_rounds) * n * elem_bytes;
    t.merged = (fold + core_rounds) * n;
  } else {
    t.messages = 2 * fold + 2 * core_rounds;
    t.bytes = (2 * fold + 2 * (p2 - 1) / p2) * n * elem_bytes;
    t.merged = (fold + (p2 - 1) / p2) * n;
  }
  t.latency_s = t.messages * link.alpha_s;
  t.bandwidth_s = t.bytes * link.seconds_per_byte;
  return t;
}

MergeSchedule choose_schedule(MergeShape shape, int ranks, std::size_t count,
                              std::size_t elem_bytes, const LinkCost& link) {
  if (shape == MergeShape::whole || ranks <= 1) return MergeSchedule::halving;
  const double n = double(count), e = double(elem_bytes);
  return schedule_time(MergeSchedule::shifted_trees, shape, ranks, n, e, link).total_s() <
                 schedule_time(MergeSchedule::halving, shape, ranks, n, e, link).total_s()
             ? MergeSchedule::shifted_trees
             : MergeSchedule::halving;
}

namespace {

int wrap(int r, int P) { return ((r % P) + P) % P; }

// Chunk c of P near-equal chunks of [0, n).
ElementRange chunk(std::size_t n, int P, int c) {
  return {n * std::size_t(c) / std::size_t(P), n * std::size_t(c + 1) / std::size_t(P)};
}

// The chunks rank `r` sends in a round: those whose tree gives r a relative rank q in
// {first, first + stride, …} with q + reach < P; listed by q so sender and receiver agree.
Ranges chunks_of(int r, int P, std::size_t n, int first, int stride, int reach) {
  Ranges out;
  for (int q = first; q + reach < P; q += stride) out.push_back(chunk(n, P, wrap(r - q, P)));
  return out;
}

void shifted_tree_steps(int P, int r, std::size_t n, std::vector<PlanStep>& steps) {
  const int rounds = ceil_log2(P);
  for (int k = 0; k < rounds; ++k) {  // reduce: relative q ≡ 2^k (mod 2^(k+1)) → q − 2^k
    const int m = 1 << k, to = wrap(r - m, P), from = wrap(r + m, P);
    steps.push_back({Phase::reduce, k + 1, k, to, from, chunks_of(r, P, n, m, 2 * m, 0),
                     chunks_of(from, P, n, m, 2 * m, 0), true, r});
  }
  for (int k = rounds - 1; k >= 0; --k) {  // broadcast: q ≡ 0 (mod 2^(k+1)) → q + 2^k
    const int m = 1 << k, to = wrap(r + m, P), from = wrap(r - m, P);
    steps.push_back({Phase::gather, k + 1, 2 * rounds - 1 - k, to, from,
                     chunks_of(r, P, n, 0, 2 * m, m), chunks_of(from, P, n, 0, 2 * m, m), false,
                     r});
  }
}

void halving_steps(int ranks, int rank, std::size_t count, MergeShape shape,
                   std::vector<PlanStep>& steps) {
  const int p2 = fold_in_size(ranks), rounds = ceil_log2(p2), last = 2 * rounds + 2;
  const Ranges all{{0, count}}, none;
  if (rank >= p2) {  // an extra rank: hand the data to its partner, get the result back
    const int partner = rank - p2;
    steps.push_back({Phase::fold_in, 0, 0, partner, partner, all, none, false, partner});
    steps.push_back({Phase::fold_out, 0, last, partner, partner, none, all, false, partner});
    return;
  }
  const int v = rank;
  const bool serves_extra = v + p2 < ranks;
  if (serves_extra) steps.push_back({Phase::fold_in, 0, 0, v + p2, v + p2, none, all, true, v});

  if (shape == MergeShape::whole) {
    // Low bits first: after round r the ranks sharing v >> r hold the same data.
    for (int r = 1; r <= rounds; ++r) {
      const int peer = v ^ (1 << (r - 1));
      steps.push_back({Phase::reduce, r, r, peer, peer, all, all, v < peer, v >> r});
    }
  } else {
    // Recursive halving, high bits first: partners share a segment, each keeps one half.
    std::vector<PlanStep> halving;
    ElementRange seg{0, count};
    int r = 1;
    for (int m = p2 / 2; m >= 1; m /= 2, ++r) {
      const int peer = v ^ m;
      const std::size_t mid = seg.begin + seg.size() / 2;
      const ElementRange lower{seg.begin, mid}, upper{mid, seg.end};
      const bool keep_upper = (v & m) != 0;
      const ElementRange keep = keep_upper ? upper : lower, give = keep_upper ? lower : upper;
      halving.push_back({Phase::reduce, r, r, peer, peer, {give}, {keep}, v < peer, v});
      seg = keep;
    }
    steps.insert(steps.end(), halving.begin(), halving.end());
    // Recursive doubling allgather in reverse: send what I own, receive the partner's half.
    for (auto it = halving.rbegin(); it != halving.rend(); ++it)
      steps.push_back({Phase::gather, it->round, 2 * rounds + 1 - it->round, it->to, it->from,
                       it->recv, it->send, it->own_is_low, v});
  }
  if (serves_extra) steps.push_back({Phase::fold_out, 0, last, v + p2, v + p2, all, none, true, v});
}

}  // namespace

MergePlan make_merge_plan(int ranks, int rank, std::size_t count, MergeShape shape,
                          MergeSchedule schedule) {
  if (schedule == MergeSchedule::shifted_trees && shape == MergeShape::whole)
    throw std::invalid_argument("make_merge_plan: shifted trees are for elementwise merges");
  MergePlan plan;
  plan.ranks = ranks;
  plan.p2 = fold_in_size(ranks);
  plan.schedule = schedule;
  if (ranks == 1) return plan;
  if (schedule == MergeSchedule::shifted_trees)
    shifted_tree_steps(ranks, rank, count, plan.steps);
  else
    halving_steps(ranks, rank, count, shape, plan.steps);
  return plan;
}

}  // namespace minisgd::comm
