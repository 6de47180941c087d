#include "minisgd/perfmodel/step_model.hpp"

#include <algorithm>
#include <cmath>

#include "minisgd/comm/merge_plan.hpp"
#include "minisgd/compress/record.hpp"
#include "minisgd/data/sparse_share.hpp"
#include "minisgd/data/sparse_synthetic.hpp"
#include "minisgd/precision/plan.hpp"

namespace minisgd::perfmodel {

namespace {

double ceil_div(double a, double b) { return std::ceil(a / b); }

// Adds the cost of one collective call moving `bytes` per rank in `messages` messages; the
// emulated network charges ⌈log2 P⌉·α_e per collective (α_e per point-to-point message) plus
// the counted bytes over its bandwidth, as comm/emulated_network does, in one wait per call
// (`waits`), each lasting the machine's wait overshoot longer than asked. On a device the
// call first waits for the kernels that wrote its buffer (comm/view_collectives.hpp: one
// fence a call from two ranks on; at one rank the reduction is the identity and waits for
// nothing).
//
// Local work is the host's (launches, library calls, bookkeeping) or the kernels'. On a host
// the kernels run on the calling thread: the two add up. A device (a machine with sync_us)
// runs its kernels while the host goes on enqueueing the next ones, and the host waits only at
// a collective's sync: between two waits the longer of the two parts counts (docs/
// performance_model.md, "A GPU's step").
struct Ledger {
  const Workload& w;
  const Machine& m;
  StepTime t;
  double host_part = 0, device_part = 0;  // of the local work since the last wait
  double log2p() const { return comm::ceil_log2(w.ranks); }
  void settle() {
    t.compute_s += m.sync_s > 0 ? std::max(host_part, device_part) : host_part + device_part;
    host_part = device_part = 0;
  }
  // The step's time, its last stretch of local work settled.
  StepTime done() {
    settle();
    return t;
  }
  void charge(double messages, double bytes, double emulated_hops, double waits = 1) {
    settle();
    t.compute_s += m.sync_s;
    t.messages += messages;
    t.bytes += bytes;
    t.latency_s += messages * m.latency_s;
    t.bandwidth_s += m.transfer_seconds(bytes);
    if (w.emulated_Bps > 0) {
      t.latency_s += emulated_hops * w.emulated_latency_s + waits * m.wait_overshoot_s;
      t.bandwidth_s += bytes / w.emulated_Bps;
    }
  }
  void allreduce(double payload) {
    if (w.ranks > 1) charge(2 * log2p(), 2.0 * (w.ranks - 1) / w.ranks * payload, log2p());
  }
  void allgather(double payload) {
    if (w.ranks > 1) charge(log2p(), (w.ranks - 1) * payload, log2p());
  }
  void alltoall(double payload) {
    if (w.ranks > 1) charge(w.ranks - 1, (w.ranks - 1) * payload, log2p());
  }
  void collective(const compress::Collective& c) {
    using Kind = compress::Collective::Kind;
    switch (c.kind) {
      case Kind::allreduce: return allreduce(c.bytes);
      case Kind::allgather: return allgather(c.bytes);
      case Kind::alltoall: return alltoall(c.bytes);
      case Kind::merge: return merge(c.shape, c.count, c.bytes, c.values);
    }
  }
  // A merge collective: one point-to-point call (one emulated hop, one wait) per message, and
  // on the host (comm/merge_allreduce.hpp) the arithmetic on the elements merged on its
  // critical path, `values` gradient values each, at the method's calibrated figure.
  void merge(comm::MergeShape shape, double count, double elem_bytes, double values = 1) {
    if (w.ranks == 1) return;
    const auto schedule =
        comm::choose_schedule(shape, w.ranks, std::size_t(count), std::size_t(elem_bytes));
    const comm::LinkCost link{m.latency_s, 1 / m.network_Bps};
    const comm::ScheduleTime path =
        comm::schedule_time(schedule, shape, w.ranks, count, elem_bytes, link);
    charge(path.messages, path.bytes, path.messages, path.messages);
    host(path.merged * values * m.merge_value_s[std::size_t(w.compression.method)]);
    settle();  // the decode waits for the merged payload
  }
  // The host's bookkeeping of a step (docs/performance_model.md, "What it counts").
  void host(double seconds) { host_part += seconds; }
  // Kernel time no rate below describes.
  void device(double seconds) { device_part += seconds; }
  // Local work: bytes streamed, flops at a rate, rows with a fixed cost, kernel launches.
  double stream_seconds(double bytes) const { return bytes / (m.memory_Bps * m.stream_efficiency); }
  void stream(double bytes) { device_part += stream_seconds(bytes); }
  // Seconds to stream bytes that outgrow the cache; none while they fit in it.
  double beyond_cache(double bytes) const {
    return bytes > m.cache_bytes ? stream_seconds(bytes) : 0;
  }
  // A pass over rows of X, at the rate for the bytes of X a rank holds (a P-th of them in
  // either decomposition), times the ranks taking turns on its core, whose rows share that
  // core's caches: from the caches while they stay in them; unknown rows: from memory.
  void read_rows(double bytes) {
    const double P = w.ranks, per_core = m.cores > 0 ? std::ceil(P / m.cores) : 1;
    const double held = double(w.rows) * double(w.features) / P * w.storage_bytes * per_core;
    device_part += bytes / m.rows_Bps(w.rows > 0 ? held : 1e300);
  }
  // A second pass over rows the step has just read: from a core's cache while they fit in it,
  // at the calibrated rate of such a pass (its arithmetic and loads from L1/L2: a fifth of the
  // column step at 256 columns), else as the first pass.
  void reread(double bytes) {
    if (bytes > m.cache_bytes)
      read_rows(bytes);
    else if (m.reread_Bps > 0)
      device_part += bytes / m.reread_Bps;
  }
  // Stored values of X read by a pass, each widened to the arithmetic when stored narrower.
  void decode(double values) {
    if (w.storage_bytes < w.arithmetic_bytes) device_part += values * m.decode_s;
  }
  void flops(double f, double rate) { device_part += f / rate; }
  // The update of n weights: w read and written, the gradient read; an optimizer with state
  // (momentum, Adam's moments) its calibrated cost beyond that, per weight.
  void update(double n) {
    stream(3 * n * w.arithmetic_bytes);
    device_part += n * m.update_value_s[std::size_t(w.optimizer)];
  }
  void rows(double n) { device_part += n * m.row_s; }
  void launches(double n) { host_part += n * m.launch_s; }
};

// The distinct columns a rank's batch of sparse rows touches.
double touched_columns(const Workload& w, double rows) {
  const double m = w.touched > 0 ? w.touched : rows * w.nnz_per_row;
  return std::min(m, double(w.features));
}

// The compressed (or dense) gradient AllReduce of the row decomposition: d values, in the
// collective calls the method's record lists (compress/record.hpp).
void gradient_exchange(Ledger& L, double d, double rows) {
  const CompressionConfig& c = L.w.compression;
  using M = CompressionMethod;
  // On sparse rows exact sparse sends the m columns touched (top-k and gTop-k k of d as ever),
  // and a host step hands the three its batch's touched columns: they compact or select among
  // them rather than scan d (docs/data.md, "The sparse step"); a device scans d.
  const bool sparse_rows = L.w.nnz_per_row > 0;
  const bool on_support = sparse_rows && L.m.sync_s == 0 &&
                          (c.method == M::sparse || c.method == M::topk || c.method == M::gtopk);
  const double m = touched_columns(L.w, rows);
  const std::vector<compress::Collective> calls = compress::traffic_of(
      c, {sparse_rows && c.method == M::sparse ? m : d, L.w.ranks, L.w.arithmetic_bytes});
  // A gradient whose values, codes and sum outgrow the cache is encoded and decoded from memory.
  const double streaming = L.m.compress_streaming_value_s[std::size_t(c.method)];
  const bool outgrows = 3 * d * L.w.arithmetic_bytes > L.m.cache_bytes;
  const double per_value =
      outgrows && streaming > 0 ? streaming : L.m.compress_value_s[std::size_t(c.method)];
  if (c.method == M::none) {
    L.launches(1);  // the plain AllReduce: nothing encoded
  } else if (on_support) {
    // The support's m values (and top-k's k pairs) at the calibrated rate per value, else four
    // streams over them; the sum zeroed over all d; the pairs received added into it at random:
    // P lists of m (sparse) or of k (topk), gTop-k's one merged list of k.
    const double density = c.method == M::topk ? c.topk.density : c.gtopk.density;
    const double k = c.method == M::sparse ? m : std::min(d, std::max(1.0, std::ceil(density * d)));
    const double handled = c.method == M::sparse ? m : m + k;
    if (per_value > 0)
      L.device(handled * per_value);
    else
      L.stream(4 * L.w.arithmetic_bytes * handled);
    L.stream(d * L.w.arithmetic_bytes);
    L.device((c.method == M::gtopk ? k : L.w.ranks * k) * L.m.sparse_nnz_s);
    L.launches(3);
  } else {
    // Encode and decode: as measured at one rank (perf/calibrate; 8-25x the four passes below
    // on a CPU, docs/performance.md, "The compressors' own work"), else four passes at the
    // streaming rate: encode reads g, writes codes; decode reads codes, writes the sum.
    if (per_value > 0)
      L.device(d * per_value);
    else
      L.stream(4 * L.w.arithmetic_bytes * d);
    L.launches(3);
  }
  for (const compress::Collective& call : calls) L.collective(call);
}

// Whether a host's SGD step on sparse rows is the lazily scaled one (solvers/sgd.cpp): plain SGD
// with no d-vector to reduce, its margins and update O(nonzeros), nothing of size d.
bool lazy_sparse(const Workload& w, const Machine& m) {
  return w.nnz_per_row > 0 && m.sync_s == 0 && w.optimizer == OptimizerKind::sgd &&
         (w.decomposition == Decomposition::column ||
          (w.ranks == 1 && w.compression.method == CompressionMethod::none));
}

StepTime sgd_row(const Workload& w, const Machine& m) {
  Ledger L{w, m, {}};
  const double rows = ceil_div(double(w.batch), w.ranks), d = double(w.features);
  if (w.nnz_per_row > 0) {  // each nonzero's weight gathered, its term added to g (or w)
    L.device(rows * w.nnz_per_row * m.sparse_nnz_s);
    L.decode(rows * w.nnz_per_row);
  } else {
    L.read_rows(rows * (d * w.storage_bytes + 8));  // the fused step reads each row once
    L.decode(rows * d);
  }
  L.rows(rows);
  L.launches(1);
  if (!lazy_sparse(w, m)) {
    gradient_exchange(L, d, rows);
    L.update(d);
    L.launches(1);
  }
  L.host(m.sgd_step_host_s);
  return L.done();
}

StepTime sgd_column(const Workload& w, const Machine& m) {
  Ledger L{w, m, {}};
  const double n = ceil_div(double(w.features), w.ranks), b = double(w.batch);
  const double nnz = b * w.nnz_per_row / w.ranks;  // a rank's nonzeros of the batch, if sparse
  if (w.nnz_per_row > 0) {
    L.device(nnz * m.sparse_nnz_s);  // margins and gradient: the per-nonzero rate holds both
    L.decode(nnz);
  } else {
    L.read_rows(b * (n * w.storage_bytes + 8));  // margins
    L.decode(b * n);
  }
  L.rows(b);
  L.launches(1);
  L.allreduce(b * w.arithmetic_bytes);  // the margins
  if (w.nnz_per_row == 0) {
    L.reread(b * n * w.storage_bytes);  // loss derivatives and the gradient product
    L.decode(b * n);
  }
  L.launches(1);
  if (!lazy_sparse(w, m)) L.update(n);
  L.launches(1);
  L.host(m.sgd_step_host_s);
  return L.done();
}

// One outer step of s inner steps, divided by s (docs/ca_sgd.md, "Cost model").
StepTime ca_sgd(const Workload& w, const Machine& m) {
  Ledger L{w, m, {}};
  const double n = ceil_div(double(w.features), w.ranks), b = double(w.batch), s = w.s;
  const double sb = s * b, cross = b * b * s * (s - 1) / 2;  // Gram entries between blocks
  L.read_rows(sb * (n * w.storage_bytes + 8));               // partial margins of the s blocks
  L.decode(sb * n);
  L.rows(sb);
  L.device(sb * m.ca_row_s);  // beyond SGD's: a row's three passes (margins, recurrence, update)
  L.launches(1);
  if (w.s > 1) {
    // Gather Y for the Gram: the outer step's rows read again (from the cache while they fit
    // in it: epsilon's 128 rows of 2000 bf16 columns at s = 4, 512 KB, were predicted 23–46%
    // slow when every pass streamed), Y written.
    L.reread(sb * n * w.storage_bytes);
    L.stream(sb * n * w.gram_input_bytes);
    if (w.gram_input_bytes > w.storage_bytes) L.decode(sb * n);
    const double rate = w.gram_input_bytes >= 8   ? m.gemm_fp64_Fps
                        : w.gram_input_bytes >= 4 ? m.gemm_fp32_Fps
                                                  : m.gemm_bf16_Fps;
    L.flops(2 * cross * n, rate);  // the blocks below the diagonal
    // Once the packed Gram outgrows the cache (s = 64 on the paper decks: 8 MB) its entries
    // stream out to memory, and the inner recurrence reads them back, under its own flops
    // (measured at s = 64, b = 32, d = 28: the Gram's phase grows by the write, the
    // recurrence's does not).
    const double packed = L.beyond_cache(cross * w.wire_bytes);
    // A path that forms the Gram in a scratch buffer first streams it that many times more.
    const double passes =
        w.gram_input_bytes >= 4 ? m.gram_scratch_passes : m.gram_bf16_scratch_passes;
    const double scratch = passes * L.beyond_cache(cross * w.arithmetic_bytes);
    L.device(std::max(cross * m.gram_entry_s, packed) + scratch);
    L.host(gram_calls(s, b, m) * m.gram_call_s);
    L.device(std::max((2 * cross + 4 * sb) / m.scalar_Fps, packed));  // the recurrence
    L.launches(3);
  }
  L.allreduce((cross + sb) * w.wire_bytes);  // one packed message [G, r]
  L.reread(sb * n * w.storage_bytes);        // the s gradient products
  L.decode(sb * n);
  L.update(n);
  L.launches(2);
  L.host(m.ca_outer_host_s + s * m.ca_inner_host_s);
  StepTime t = L.done();
  for (double* x : {&t.compute_s, &t.latency_s, &t.bandwidth_s, &t.messages, &t.bytes}) *x /= s;
  return t;
}

// More ranks than the node's cores: they take turns on them, and since every step waits for
// all ranks, the step runs at the pace of a core holding ⌈P/cores⌉ of them (not P/cores: the
// work of the ranks on other cores cannot move to it within a step); a message finds its
// receiver switched out with probability 1 − cores/P, waiting one context switch for it
// (unless the network was calibrated with at least P ranks on the node: its α has the waits).
StepTime shared_cores(StepTime t, const Workload& w, const Machine& m) {
  const double P = w.ranks;
  if (m.cores <= 0 || P <= m.cores) return t;
  t.compute_s *= std::ceil(P / m.cores);
  if (m.network_ranks < P) t.latency_s += t.messages * (1 - m.cores / P) * m.switch_s;
  return t;
}

}  // namespace

double gram_calls(double s, double b, const Machine& m) {
  return s > 2 && s * b <= m.gram_whole_rows ? 1 : s - 1;
}

Workload workload_of(const Config& c, std::int64_t features, int ranks, std::int64_t rows) {
  Workload w;
  w.rows = rows;
  w.method = c.solver.method;
  w.decomposition = c.solver.decomposition;
  w.ranks = ranks;
  w.batch = c.solver.batch_size;
  w.features = features;
  w.s = c.solver.s;
  const precision::Realization& r = c.precision.realized;  // realized once, by the deck reader
  w.storage_bytes = double(precision::bytes_per_value(r.storage));
  w.arithmetic_bytes = double(precision::bytes_per_value(r.compute));
  w.gram_input_bytes = double(precision::bytes_per_value(r.gram_input));
  w.wire_bytes = double(precision::bytes_per_value(w.s > 1 ? r.wire : r.margins_wire));
  w.optimizer = c.solver.optimizer;
  w.compression = c.compression;
  if (c.comm.emulated()) {
    w.emulated_latency_s = c.comm.latency_us * 1e-6;
    w.emulated_Bps = c.comm.bandwidth_GBps * 1e9;
  }
  const SyntheticConfig& g = c.data.synthetic;
  if (c.data.source == DataSource::synthetic && sparse_kind(g.kind) && features > 0) {
    const double nnz = sparse_shape(g).nnz_per_row;
    if (stores_sparse(c, nnz, 1, features)) {
      w.nnz_per_row = nnz;
      const double rows_a_rank = std::ceil(double(w.batch) / ranks);
      w.touched = expected_touched(double(features), rows_a_rank * nnz, g.zipf);
    }
  }
  return w;
}

double expected_touched(double d, double draws, double zipf) {
  // Column rank k is among the draws with probability 1 − (1 − p_k)^draws. The ranks in blocks
  // of a thousandth of k (p_k varies by under 0.2% across one), each c ranks of mass q counted
  // as c·(1 − (1 − q/c)^draws): thousands of terms for any d.
  const double a = 1 - zipf;
  const auto cdf = [&](double x) {  // P(rank < x)·norm
    return std::abs(a) < 1e-9 ? std::log(x + 1) : std::expm1(a * std::log(x + 1)) / a;
  };
  const double norm = cdf(d);
  double m = 0;
  for (double k = 0; k < d;) {
    const double next = std::min(d, k + std::max(1.0, std::floor(k / 1000)));
    const double c = next - k, q = (cdf(next) - cdf(k)) / norm;
    m -= c * std::expm1(draws * std::log1p(-q / c));
    k = next;
  }
  return std::min(d, m);
}

StepTime predict_step(const Workload& w, const Machine& m) {
  if (w.method == Method::ca_sgd) return shared_cores(ca_sgd(w, m), w, m);
  return shared_cores(w.decomposition == Decomposition::row ? sgd_row(w, m) : sgd_column(w, m), w,
                      m);
}

std::vector<SChoice> s_candidates(Workload w, const Machine& m, int max_s) {
  std::vector<SChoice> out;
  w.method = Method::ca_sgd;
  for (int s = 1; s <= max_s; s *= 2) {
    w.s = s;
    out.push_back({s, predict_step(w, m)});
  }
  return out;
}

int best_s(const Workload& w, const Machine& m, int max_s) {
  const auto c = s_candidates(w, m, max_s);
  return std::min_element(
             c.begin(), c.end(),
             [](const SChoice& a, const SChoice& b) { return a.step.total_s() < b.step.total_s(); })
      ->s;
}

}  // namespace minisgd::perfmodel
